// swift-format-ignore-file
// This file holds copies of documentation code blocks, compared with them line by line, so it keeps the
// documents' layout (aligned comments) rather than the formatter's.
import BoardwalkModel
import BoardwalkQuery
import BoardwalkStore
import Foundation
import Testing

/// The README's "Embed it" block compiles and runs as written, so that the first Swift a newcomer reads cannot rot
/// (it once used an undefined `controllerID`). `EmbeddingAsDocumentedTests` (CLI tests) also compares what it prints
/// with the output the README shows.
@Suite struct ReadmeExampleTests {
    @Test func embedBlockMatchesAndRuns() throws {
        let blocks = try DocBlocks.swiftBlocks(in: "README.md", after: "## Embed it")
        let document = DocBlocks.normalized(try #require(blocks.first))
        #expect(document == (try DocBlocks.region(0, in: #filePath)), "README.md's Embed it block differs from its copy")

        let sessions = try embed()
        #expect(sessions == 2, "the cell the block prints last: sessions that reached screen 1")
    }

    /// The block, with `print` collected instead; returns the last line printed as an integer.
    private func embed() throws -> Int {
        var printed: [String] = []
        func print(_ item: Any) { printed.append("\(item)") }
        // doc block 0
        // A new store in a directory of its own (Store.open creates the directory, not its parents).
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("boardwalk-\(UUID().uuidString)")
        let store = try Store.open(at: directory.path)

        // Three presentations (sessions) of a four-screen onboarding: s1 sees every screen, s2 two, s3 one.
        let start = Timestamp(iso8601: "2026-11-10T10:00:00Z")!
        let shown: [(session: String, screen: Int, second: Int64)] = [
            ("s1", 0, 0), ("s1", 1, 8), ("s1", 2, 20), ("s1", 3, 31),
            ("s2", 0, 60), ("s2", 1, 75),
            ("s3", 0, 120),
        ]
        let events = shown.map { s in
            Event(time: Timestamp(microseconds: start.microseconds + s.second * 1_000_000), session: s.session,
                  eventID: "\(s.session)-\(s.screen)",  // makes a retried append harmless
                  meta: Meta(onboardingID: "onb_1", screenClientID: "screen-\(s.screen)", screenIndex: s.screen, totalScreens: 4),
                  payload: .analytics(.screenPresented))
        }
        let result = try store.append(events)  // one transaction, durable when it returns
        print("stored \(result.appended) events")

        let table = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel"#).run(on: StoreEventSource(store))
        print(table.render(.table))
        print(table[1, "sessions"]?.intValue ?? 0)  // a cell as a Swift value: row 1, column "sessions"

        store.close()
        try FileManager.default.removeItem(at: directory)
        // end doc block
        return Int(printed.last ?? "") ?? -1
    }
}
