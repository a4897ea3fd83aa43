// swift-format-ignore-file
// This file holds copies of documentation code blocks, compared with them line by line, so it keeps the
// documents' layout (aligned comments) rather than the formatter's.
import BoardwalkModel
import BoardwalkQuery
import BoardwalkStore
import Foundation
import Testing

// The query side of the embedding guide, compiled and run as written: the fourth ```swift block of
// docs/storage.md's "The Swift API" (reading what the recorder stored, and results as Swift values) and the
// "From Swift" block of docs/query-language.md. As in EmbeddingGuideTests (store tests), each `// doc block`
// region is a copy of the document's block and `docBlocksMatch` fails when they differ.

@Suite("The query side of the embedding guide")
struct EmbeddingQueryGuideTests {
    @Test("the documents' blocks are the code these tests compile")
    func docBlocksMatch() throws {
        let storage = try DocBlocks.swiftBlocks(in: "docs/storage.md", after: "## The Swift API")
        let language = try DocBlocks.swiftBlocks(in: "docs/query-language.md", after: "From Swift:")
        #expect(storage.count == 4 && !language.isEmpty)
        for (name, document, index) in [("storage.md block 3", storage.last ?? "", 0), ("query-language.md From Swift", language.first ?? "", 1)] {
            let copy = try DocBlocks.region(index, in: #filePath)
            #expect(DocBlocks.normalized(document) == copy, "docs/\(name) differs from its copy in EmbeddingQueryGuideTests.swift")
        }
    }

    @Test("reading what the recorder stored: funnel, answers, an error that says where, one presentation")
    func recordedQueries() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bw-embedding-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(at: dir)
        try store.append(GuideSessions.events)
        let seen = try GuideQueryBlock.run(recorder: RecorderStandIn(store: store), controllerID: "c-pro")

        // Four screens; three sessions start, all three reach screen 1, two screen 2, two the last one.
        #expect(seen.screens.map(\.screen) == [0, 1, 2, 3])
        #expect(seen.screens.map(\.sessions) == [3, 3, 2, 2])
        #expect(seen.screens[0].percentOfFirst == 100)
        #expect(abs((seen.screens[2].percentOfFirst ?? 0) - 200.0 / 3) < 1e-9)
        #expect(seen.screens[0].medianSeconds == 0)
        // Reaching screen 1: 10 s, 20 s and 30 s after each session's first event; screen 3: 40 s and 60 s.
        #expect(seen.screens[1].medianSeconds == 20)
        #expect(seen.screens[3].medianSeconds == 50)
        #expect(seen.completedByLevel == ["pro": 1, "beginner": 1], "the session that stopped at screen 1 did not complete")
        #expect(seen.message.hasPrefix("error: unknown function `answr`; did you mean `answer`?"), "\(seen.message)")
        #expect(seen.message.contains("--> query:1:21"), "\(seen.message)")
        #expect(seen.presentation.map(\.event) == GuideSessions.events.filter { $0.session == "c-pro" })
    }

    @Test("the From Swift block of docs/query-language.md runs as written")
    func fromSwiftBlock() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bw-embedding-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Store.open(at: dir)
        try store.append(GuideSessions.events)
        let table = try GuideQueryBlock.fromSwift(text: "sessions | count by exit", store: store)
        #expect(table.columns == ["exit", "count"])
        #expect(table[0, "exit"]?.stringValue == "abandoned" && table[0, "count"]?.intValue == 1)
        #expect(table[1, "exit"]?.stringValue == "completed" && table[1, "count"]?.intValue == 2)
    }

    @Test("a result's cells read as Swift values, each accessor only for its own case")
    func typedAccessors() throws {
        let source = InMemoryEventSource(GuideSessions.events)
        let query = try Query.parse(#"""
            sessions | stats count() as n, rate(completed) as rate, p50(duration) as median, min(started) as first,
                             count_distinct(onboarding) as onboardings by completed
            """#)
        let table = try query.run(on: source)
        #expect(table.columns == ["completed", "n", "rate", "median", "first", "onboardings"])
        #expect(table.rows.count == 2)
        // Groups by key ascending: false, then true.
        #expect(table[0, "completed"]?.boolValue == false && table[1, "completed"]?.boolValue == true)
        #expect(table[0, "n"]?.intValue == 1 && table[1, "n"]?.intValue == 2)
        #expect(table[1, "n"]?.doubleValue == 2, "an integer reads as a double too")
        #expect(table[1, "rate"]?.doubleValue == 1 && table[1, "rate"]?.intValue == nil, "a rate is a number, never an integer")
        #expect(table[1, "median"]?.durationSeconds == 50, "the completed sessions last 40 s and 60 s")
        #expect(table[1, "median"]?.doubleValue == nil, "a duration is not read as a bare number of microseconds")
        #expect(table[1, "first"]?.timestampValue == GuideSessions.start)
        #expect(table[1, "first"]?.stringValue == nil)
        #expect(table[0, "no such column"] == nil)
        #expect(table[0, "completed"]?.displayText == "false")
        #expect(table[1, "median"]?.displayText == "50s")

        // A multi-select answer listed as is is a set; grouped, it explodes into strings.
        let listed = try Query.parse(#"sessions | where session == "c-pro" | select answer("goals") as goals"#).run(on: source)
        #expect(listed[0, "goals"]?.setValue == ["calm", "fit"])
        #expect(listed[0, "goals"]?.stringValue == nil)
        #expect(listed[0, "goals"]?.displayText == "[calm, fit]")
        let grouped = try Query.parse(#"sessions | count by answer("goals") as goal"#).run(on: source)
        #expect(grouped.column("goal")?.map(\.stringValue) == ["calm", "fit", nil])

        // Every cell's displayText is exactly the cell the table format prints.
        let rendered = table.render(.table).split(separator: "\n").dropFirst(2).map {
            $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        }
        #expect(rendered == table.rows.map { $0.map(\.displayText) })
        #expect(Value.null.intValue == nil && Value.null.displayText == "-")
    }
}

/// Three sessions of onboarding `onb_1` (four screens, the last `final`), ten seconds between screens:
/// `c-pro` answers "pro" and completes in 40 s, `c-beg` answers "beginner" and completes in 60 s, `c-stop` answers
/// "beginner" and stops at screen 1.
enum GuideSessions {
    static let start = Timestamp(iso8601: "2026-11-10T10:00:00Z")!

    static let events: [Event] = {
        var events: [Event] = []
        func add(_ session: String, _ second: Int64, _ screen: Int?, _ payload: Payload) {
            let meta = screen.map {
                Meta(onboardingID: "onb_1", screenClientID: $0 == 3 ? "final" : "screen-\($0)", screenIndex: $0, totalScreens: 4)
            }
            events.append(Event(time: Timestamp(microseconds: start.microseconds + second * 1_000_000), session: session,
                                eventID: "\(session)-\(events.count)", meta: meta, payload: payload))
        }
        func level(_ value: String) -> Payload {
            .stateUpdated(StateUpdate(elementID: "level", value: .select(Choice(id: value, value: value, label: value.capitalized))))
        }
        // c-pro: screens at 0, 10, 20, 40 s.
        add("c-pro", 0, 0, .analytics(.screenPresented))
        add("c-pro", 10, 1, .analytics(.screenPresented))
        add("c-pro", 12, 1, level("pro"))
        add("c-pro", 13, 1, .stateUpdated(StateUpdate(elementID: "goals", value: .multiSelect([
            Choice(id: "g1", value: "fit", label: "Fit"), Choice(id: "g2", value: "calm", label: "Calm")]))))
        add("c-pro", 20, 2, .analytics(.screenPresented))
        add("c-pro", 40, 3, .analytics(.screenPresented))
        add("c-pro", 40, 3, .analytics(.onboardingCompleted))
        // c-beg: starts a minute later; screens at 0, 20, 30, 60 s.
        add("c-beg", 60, 0, .analytics(.screenPresented))
        add("c-beg", 80, 1, .analytics(.screenPresented))
        add("c-beg", 85, 1, level("beginner"))
        add("c-beg", 90, 2, .analytics(.screenPresented))
        add("c-beg", 120, 3, .analytics(.screenPresented))
        add("c-beg", 120, 3, .analytics(.onboardingCompleted))
        // c-stop: screens at 0 and 30 s, then nothing.
        add("c-stop", 200, 0, .analytics(.screenPresented))
        add("c-stop", 230, 1, .analytics(.screenPresented))
        add("c-stop", 231, 1, level("beginner"))
        return events
    }()
}

/// The guide's recorder (docs/storage.md, block 1) reduced to what block 3 uses: its store. The recorder itself
/// is compiled and run by EmbeddingGuideTests in the store tests, a target this one cannot import.
struct RecorderStandIn {
    let store: Store
}

struct GuideQueryResults {
    var screens: [(screen: Int, sessions: Int, percentOfFirst: Double?, medianSeconds: Double?)]
    var completedByLevel: [String: Int]
    var message: String
    var presentation: [StoredEvent]
}

enum GuideQueryBlock {
    static func run(recorder: RecorderStandIn, controllerID: String) throws -> GuideQueryResults {
        // doc block 0
        let source = StoreEventSource(recorder.store)            // cheap: make one where it is used
        let funnel = try Query.parse(#"sessions | where onboarding == "onb_1" | funnel"#).run(on: source)
        let screens = funnel.rows.indices.map { row in
            (screen: funnel[row, "step"]?.intValue ?? 0,
             sessions: funnel[row, "sessions"]?.intValue ?? 0,
             percentOfFirst: funnel[row, "pct_of_first"]?.doubleValue,     // nil when no session started
             medianSeconds: funnel[row, "median_time"]?.durationSeconds)   // nil when no session reached the screen
        }
        // `as` names a column; without it this one would be named answer("level").
        let levels = try Query.parse(#"sessions | where completed | count by answer("level") as level"#).run(on: source)
        let completedByLevel = Dictionary(levels.rows.indices.map { row in
            (levels[row, "level"]?.stringValue ?? "(no answer)", levels[row, "count"]?.intValue ?? 0)
        }, uniquingKeysWith: +)
        // Query.parse throws only QueryError; its description shows the query with a caret under the mistake.
        let message: String
        do {
            _ = try Query.parse(#"sessions | count by answr("level")"#)
            message = "parsed"
        } catch {
            message = error.description                           // error.kind == .type, error.location: (1, 21)
        }
        // One presentation, as recorded (its events in time order):
        let presentation = try recorder.store.read { try $0.events(inSession: controllerID) }
        // end doc block
        return GuideQueryResults(screens: screens, completedByLevel: completedByLevel, message: message, presentation: presentation)
    }

    static func fromSwift(text: String, store: Store) throws -> ResultTable {
        // doc block 1
        let query = try Query.parse(text)                 // throws(QueryError): syntax and type errors, before any read
        let source = StoreEventSource(store)              // or InMemoryEventSource(events)
        let table = try query.run(on: source)             // RunOptions(now:cancellation:ignoreDamaged:) optional
        print(table.render(.table))                       // .table, .json, .csv
        print(query.explain(on: source))                  // the plan and the key ranges it reads
        // end doc block
        return table
    }
}

/// The ```swift blocks of a document and their copies here (a smaller twin of the store tests' `GuideText`,
/// which this target cannot import).
enum DocBlocks {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The bodies of the ```swift blocks from the line `marker` up to the next `## ` heading.
    static func swiftBlocks(in document: String, after marker: String) throws -> [String] {
        let path = root.appendingPathComponent(document).path
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == marker }) else { throw Missing(description: "\(path): no line \"\(marker)\"") }
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.count
        var blocks: [String] = [], current: [Substring]?
        for line in lines[start..<end] {
            if current == nil, line == "```swift" {
                current = []
            } else if let body = current, line == "```" {
                blocks.append(body.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The lines between `// doc block <index>` and the next `// end doc block` of the file at `path`, normalized.
    static func region(_ index: Int, in path: String) throws -> String {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        guard let begin = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// doc block \(index)" }),
              let end = lines[begin...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// end doc block" })
        else { throw Missing(description: "\(path): no region \"// doc block \(index)\" … \"// end doc block\"") }
        return normalized(lines[(begin + 1)..<end].joined(separator: "\n"))
    }

    /// The code without `import` lines, trailing spaces, surrounding blank lines and common indentation.
    static func normalized(_ code: String) -> String {
        var lines = code.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var line = line
            while line.last == " " { line.removeLast() }
            return line
        }
        lines.removeAll { $0.hasPrefix("import ") }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.isEmpty ? "" : String($0.dropFirst(indent)) }.joined(separator: "\n")
    }
}
