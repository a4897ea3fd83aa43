import BoardwalkModel
import BoardwalkQuery
import BoardwalkStore
import Foundation
import Testing

/// The README's "Embed it" block compiles and runs as written (only the store's path differs), so that the first
/// Swift a newcomer reads cannot rot (it once used an undefined `controllerID`).
@Suite struct ReadmeExampleTests {
    @Test func embedBlockMatchesAndRuns() throws {
        let blocks = try DocBlocks.swiftBlocks(in: "README.md", after: "## Embed it")
        let document = DocBlocks.normalized(try #require(blocks.first))
            .replacingOccurrences(of: #""/path/to/events.db""#, with: "path")
        #expect(document == (try DocBlocks.region(0, in: #filePath)), "README.md's Embed it block differs from its copy")

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bw-readme-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sessions = try embed(path: path)
        #expect(sessions == 1)
    }

    /// The block, with `print` of the cell returned instead.
    private func embed(path: String) throws -> Int {
        var printed: [String] = []
        func print(_ item: Any) { printed.append("\(item)") }
        // doc block 0
        let store = try Store.open(at: path)
        let presentation = UUID().uuidString  // one id per presentation of an onboarding: the session
        try store.append([
            Event(time: Timestamp(milliseconds: 1_793_527_200_000), session: presentation, eventID: UUID().uuidString,
                  meta: Meta(onboardingID: "onb_1", screenClientID: "welcome", screenIndex: 0, totalScreens: 8),
                  payload: .analytics(.screenPresented)),
        ])
        let table = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel"#)
            .run(on: StoreEventSource(store))
        print(table.render(.table))
        print(table[0, "sessions"]?.intValue ?? 0)  // typed reading of a cell
        // end doc block
        store.close()
        return Int(printed.last ?? "") ?? -1
    }
}
