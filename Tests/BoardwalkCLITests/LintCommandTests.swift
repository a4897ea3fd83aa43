import Boardwalk
import Foundation
import Testing

/// `boardwalk lint` through the built executable: stores of generated sessions are clean (exit 0), each problem
/// injected into an onboarding of an otherwise clean store is found there and nowhere else (exit 2), and a store
/// that is missing, empty or damaged gives a clear message (exit 1).
@Suite("lint finds what is wrong with onboardings")
struct LintCommandTests {
    let directory: URL
    init() throws { directory = try temporaryDirectory() }

    /// One event as an NDJSON line: `seconds` after 2026-11-01T00:00Z, of `session` in `onboarding` at `screen` of
    /// `total`; `body` holds its kind's fields.
    static func line(
        _ seconds: Int, _ session: String, _ onboarding: String, variation: String, screen: Int, total: Int,
        _ body: String
    ) -> String {
        let ms = 1_793_491_200_000 + Int64(seconds) * 1000
        return "{\"ts\":\(ms),\"session_id\":\"\(session)\",\"variation_id\":\"\(variation)\",\(body),"
            + "\"meta\":{\"onboarding_id\":\"\(onboarding)\",\"screen_cid\":\"s\(screen)\",\"screen_index\":\(screen),"
            + "\"total_screens\":\(total)}}\n"
    }

    static func analytics(_ name: String) -> String { "\"type\":\"analytics\",\"name\":\"\(name)\"" }
    static func select(_ element: String, option: String, value: String) -> String {
        "\"type\":\"state_updated\",\"element_id\":\"\(element)\",\"element_type\":\"select\","
            + "\"value\":{\"id\":\"\(option)\",\"value\":\"\(value)\",\"label\":\"\(value)\"}"
    }
    static func action(_ kind: String, _ id: String) -> String { "\"kind\":\"\(kind)\",\"actionId\":\"\(id)\"" }

    /// One event of a session: seconds after the session's start, screen, kind's fields, and total_screens.
    struct Step {
        var at: Int
        var screen: Int
        var body: String
        var total = 3
    }

    /// A session of a clean 3-screen onboarding, 30 s apart: started, screen 0 answered, screens 1 and 2, completed
    /// on screen 2, closed.
    static let cleanSteps: [Step] = [
        Step(at: 0, screen: 0, body: analytics("onboarding_started")),
        Step(at: 30, screen: 0, body: analytics("screen_presented")),
        Step(at: 60, screen: 0, body: select("goal", option: "option_1", value: "a")),
        Step(at: 90, screen: 0, body: analytics("screen_completed")),
        Step(at: 120, screen: 1, body: analytics("screen_presented")),
        Step(at: 150, screen: 1, body: analytics("screen_completed")),
        Step(at: 180, screen: 2, body: analytics("screen_presented")),
        Step(at: 210, screen: 2, body: analytics("onboarding_completed")),
        Step(at: 240, screen: 2, body: action("close", "close_button")),
    ]

    /// `sessions` sessions of `onboarding` (every `bEvery`-th of variation `b`, the others `a`), 10 minutes apart;
    /// `first` changes the first session's steps, `every` each session's; `lateFirst` sends the first session's
    /// step at that position last.
    static func onboarding(
        _ name: String, sessions: Int = 4, bEvery: Int = 2, lateFirst: Int? = nil,
        first: (inout [Step]) -> Void = { _ in }, every: (inout [Step]) -> Void = { _ in }
    ) -> String {
        var out = ""
        for s in 0..<sessions {
            var steps = cleanSteps
            every(&steps)
            if s == 0 { first(&steps) }
            var lines = steps.map {
                line(
                    $0.at + s * 600, "\(name)-\(s)", name, variation: s % bEvery == 0 ? "b" : "a", screen: $0.screen,
                    total: $0.total, $0.body)
            }
            if s == 0, let late = lateFirst { lines.append(lines.remove(at: late)) }
            out += lines.joined()
        }
        return out
    }

    func ingest(_ text: String, _ name: String) throws -> String {
        let db = directory.appendingPathComponent(name).path
        let r = try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: text)
        #expect(r.status == 0, "\(r.stderr)")
        return db
    }

    @Test("the generator's sessions are lint-clean: exit 0")
    func generatedStoresAreClean() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        for seed in ["3", "11"] {
            let generated = try boardwalk(["generate", "-n", "600", "--seed", seed])
            #expect(generated.status == 0)
            let db = try ingest(generated.stdout, "generated-\(seed).db")
            let r = try boardwalk(["lint", "--db", db])
            #expect(r.status == 0, "seed \(seed):\n\(r.stdout)\(r.stderr)")
            #expect(r.stdout.hasPrefix("no problems found ("), "\(r.stdout)")
        }
    }

    @Test("each injected problem is found in its onboarding, and only there: exit 2")
    func injectedProblemsAreFound() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var text = Self.onboarding("clean")
        text += Self.onboarding("lengths") { $0[5].total = 4 }
        text += Self.onboarding("range") {
            $0.insert(Step(at: 200, screen: 3, body: Self.action("custom", "x")), at: 7)
        }
        text += Self.onboarding("unshown", every: { $0[4].body = Self.analytics("second_screen_presented") })
        text += Self.onboarding("offlast") {
            $0 =
                Array($0.prefix(5)) + [
                    Step(at: 150, screen: 1, body: Self.analytics("onboarding_completed")),
                    Step(at: 160, screen: 1, body: Self.action("close", "c")),
                ]
        }
        text += Self.onboarding("nostart") { $0.removeFirst() }
        text += Self.onboarding("after") { $0.append(Step(at: 250, screen: 2, body: Self.action("custom", "more"))) }
        text += Self.onboarding("zero") {
            $0.remove(at: 5)
            $0[5].at = 120  // screen 2 presented the instant screen 1 was
        }
        // Step 3 (screen 0 completed, at 90 s) sent after the close at 240 s.
        text += Self.onboarding("order", lateFirst: 3)
        text += Self.onboarding("srm", sessions: 80, bEvery: 4)
        text += Self.onboarding("element") {
            $0.insert(Step(at: 130, screen: 1, body: Self.select("goal", option: "option_1", value: "a")), at: 5)
        }
        text += Self.onboarding("options") { $0[2].body = Self.select("goal", option: "option_1", value: "z") }
        let db = try ingest(text, "injected.db")

        let r = try boardwalk(["lint", "--db", db, "--format", "json"])
        #expect(r.status == 2, "\(r.stdout)\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["sessions"] as? Int == 12 * 4 + 80 - 4)
        let findings = try #require(object["findings"] as? [[String: Any]])
        let found = Set(findings.map { "\($0["lint"] as? String ?? "?") \($0["onboarding"] as? String ?? "?")" })
        #expect(
            found == [
                "total_screens_differ lengths", "screen_out_of_range range", "screen_never_presented unshown",
                "completed_off_last_screen offlast", "no_onboarding_started nostart", "events_after_completed after",
                "zero_time_presentation zero", "out_of_time_order order", "sample_ratio_mismatch srm",
                "element_on_several_screens element", "select_option_mismatch options",
            ], "\(r.stdout)")
        for finding in findings
        where !["screen_never_presented", "sample_ratio_mismatch", "element_on_several_screens"].contains(
            finding["lint"] as? String ?? "")
        {
            // Each injected problem is in the first session of its onboarding, and once.
            #expect(finding["count"] as? Int == 1, "\(finding)")
            #expect(
                finding["example_session"] as? String == "\(finding["onboarding"] as? String ?? "")-0", "\(finding)")
        }
        // The query given for each runs and shows something.
        for finding in findings {
            let query = try #require(finding["query"] as? String)
            let shown = try boardwalk(["query", "--db", db, "--format", "json", query])
            #expect(shown.status == 0 && !shown.stdout.isEmpty, "\(query): \(shown.stderr)")
        }
        let table = try boardwalk(["lint", "--db", db])
        #expect(table.status == 2)
        #expect(table.stdout.hasPrefix("11 problems in 11 onboardings ("), "\(table.stdout)")
        #expect(
            table.stdout.contains(
                """
                out_of_time_order: onboarding order
                  1 session with an event that arrived after a later one by more than 60s
                  count: 1 sessions, e.g. session order-0
                  query: events | where session == "order-0" | select seq, time, name
                """), "\(table.stdout)")
        // The `lints` source has the same findings, as rows.
        let rows = try boardwalk(["query", "--db", db, "--format", "csv", "lints | select lint, onboarding"])
        #expect(rows.status == 0)
        let listed = rows.stdout.split(separator: "\n").dropFirst().map { String($0).replacing(",", with: " ") }
        #expect(Set(listed) == found, "\(rows.stdout)")
        // A slack past the 150 s the event came late by forgives it.
        let slack = try boardwalk(["lint", "--db", db, "--format", "json", "--order-slack", "3m"])
        #expect(!slack.stdout.contains("out_of_time_order"))
    }

    @Test("a missing, empty or damaged store, or a wrong option, is a clear message")
    func unreadableStores() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = try boardwalk(["lint", "--db", directory.appendingPathComponent("none").path])
        #expect(missing.status == 1 && missing.stderr.contains("no store at"), "\(missing.stderr)")
        let emptyPath = directory.appendingPathComponent("empty.db").path
        try Store.open(at: emptyPath).close()
        let empty = try boardwalk(["lint", "--db", emptyPath])
        #expect(empty.status == 1, "\(empty.stderr)")
        #expect(empty.stderr.contains("has no events: nothing to lint"), "\(empty.stderr)")
        #expect(empty.stdout.isEmpty)
        let usage = try boardwalk(["lint", "--db", emptyPath, "--order-slack", "soon"])
        #expect(usage.status == 64 && usage.stderr.contains("--order-slack takes a duration"), "\(usage.stderr)")

        // Every overflow page (the store's event blocks) with a byte flipped inside its data: the checksums fail.
        let generated = try boardwalk(["generate", "-n", "300", "--seed", "5"])
        let db = try ingest(generated.stdout, "pristine.db")
        let damaged = directory.appendingPathComponent("damaged.db").path
        try FileManager.default.createDirectory(atPath: damaged, withIntermediateDirectories: true)
        var data = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))
        for p in 2..<(data.count / 4096) where data[p * 4096 + 10] & 0x7F == 0x04 { data[p * 4096 + 200] ^= 0x5A }
        try data.write(to: URL(fileURLWithPath: damaged + "/data.mdb"))
        let r = try boardwalk(["lint", "--db", damaged])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("boardwalk check"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }
}
