import Boardwalk
import BoardwalkGenerator
import Foundation
import Testing

// Every query the documents show an analyst, run the way the analyst would, on the data the README's `demo` stores
// (the generator's default catalog): an example that fails to parse, or asks about an element no generated onboarding
// has (and so answers nothing on the demo store), fails here.

@Suite("The example queries of docs/query-language.md and docs/cli.md run on the demo's kind of data")
struct DocExamplesRunTests {
    /// The repository's root, from this file's path (Tests/BoardwalkCLITests/…).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The example queries of a document: `events …`/`sessions …` in backticks (tables escape `|` as `\|`), lines of
    /// fenced blocks that start with a source, and single-quoted arguments of `boardwalk query` lines. Placeholders
    /// (`…`) are left out, and so is text without a stage.
    static func examples(in document: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/" + document), encoding: .utf8)
        var found: [String] = []
        func add(_ query: String) {
            // The REPL's `\G` at the end asks for the vertical view; the query is what comes before it.
            var query = query
            if query.hasSuffix(" \\G") { query = String(query.dropLast(3)) }
            // A query has a stage; `events 1.2 k (1234)` (docs/cli.md, what `stats` prints) is not one.
            if query.contains("|"), !query.contains("…"), !found.contains(query) { found.append(query) }
        }
        for match in text.matches(of: /`((?:events|sessions) [^`]*)`/) {
            add(String(match.1).replacingOccurrences(of: "\\|", with: "|"))
        }
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            if inFence, line.hasPrefix("events ") || line.hasPrefix("sessions ") { add(String(line)) }
            if inFence, line.contains("boardwalk query"),
                let quoted = line.firstMatch(of: /'((?:events|sessions)[^']*)'/)
            {
                add(String(quoted.1))
            }
        }
        return found
    }

    /// The examples that show an error on purpose (docs/query-language.md, "Errors"; docs/cli.md, the caret).
    static let meantToFail: Set<String> = ["events | where screen_idx == 2", "events | bogus"]

    /// The language's twelve reference examples, quoted verbatim in docs/query-language.md ("Twelve reference
    /// examples"): two ask about an element `experience` the generator does not make, which the document says, and
    /// `ReferenceExampleTests` checks their answers on events that have it.
    static let experienceExamples: Set<String> = [
        #"sessions | where completed | count by answer("experience")"#,
        #"sessions | where answer("experience") == "pro" and did(open_paywall) | count"#,
    ]

    static let demo: InMemoryEventSource = InMemoryEventSource(Array(SyntheticData(sessions: 300, seed: 1).events()))

    @Test("every example parses and runs on the demo's kind of data", arguments: ["query-language.md", "cli.md"])
    func examplesRun(document: String) throws {
        let queries = try Self.examples(in: document)
        #expect(queries.count >= (document == "cli.md" ? 5 : 60), "the extraction found \(queries.count) examples")
        for query in queries where !Self.meantToFail.contains(query) {
            do {
                _ = try Query.parse(query).run(on: Self.demo)
            } catch {
                Issue.record("\(document): \(query)\n\(error)")
            }
        }
        for query in queries where Self.meantToFail.contains(query) {
            #expect(throws: QueryError.self, "\(query) is shown failing") { try Query.parse(query) }
        }
    }

    @Test("docs/query-language.md quotes each of the twelve reference examples as written")
    func referenceExamplesAreQuoted() throws {
        let quoted = try Self.examples(in: "query-language.md")
        let reference = [
            "events | count",
            #"events | where kind == "analytics" | count by name"#,
            #"events | where onboarding == "onb_1" and screen >= 2 and time >= @2026-11-01 | count by screen, name"#,
            "sessions | count",
            #"sessions | where onboarding == "onb_1" | funnel"#,
            #"sessions | where onboarding == "onb_1" | funnel screen_presented(screen == 0), screen_completed(screen == 2), open_paywall within 30m"#,
            #"sessions | where completed | count by answer("experience")"#,
            "sessions | stats count(), rate(completed), p50(duration), p90(duration) by onboarding",
            #"events | where name == "screen_presented" | stats p50(dwell), p90(dwell) by screen"#,
            #"events | where element == "interests" | top 10 value"#,
            "sessions | count by exit",
            #"sessions | where answer("experience") == "pro" and did(open_paywall) | count"#,
        ]
        for query in reference { #expect(quoted.contains(query), "not quoted: \(query)") }
    }

    @Test(
        "every element an example asks about is one the demo's onboardings have",
        arguments: ["query-language.md", "cli.md"])
    func examplesNameRealElements(document: String) throws {
        var elements: Set<String> = []
        for event in SyntheticData(sessions: 300, seed: 1).events() {
            if case .stateUpdated(let update) = event.payload { elements.insert(update.elementID) }
        }
        for query in try Self.examples(in: document) where !Self.experienceExamples.contains(query) {
            for match in query.matches(of: /(?:answer\(|element == )"([^"]*)"/) {
                #expect(
                    elements.contains(String(match.1)),
                    "\(document): `\(query)` asks about `\(match.1)`, which no generated onboarding has")
            }
        }
    }
}
