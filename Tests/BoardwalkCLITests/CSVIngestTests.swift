import BoardwalkGenerator
import BoardwalkJSON
import BoardwalkModel
import BoardwalkStore
import Foundation
import Testing

@testable import BoardwalkCLI

/// `ingest --format csv` reads what `export --format csv` writes, and the export's query columns are what queries show.
@Suite("CSV: the export's columns are query fields, and ingest reads them back")
struct CSVIngestTests {
    let directory: URL
    var db: String { directory.appendingPathComponent("db").path }
    init() throws { directory = try temporaryDirectory() }

    func write(_ text: String, _ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    /// Events a generator does not make: every answer type with awkward text, errors without meta, empty ids.
    static var awkward: [Event] {
        let meta = Meta(onboardingID: "onb, \"1\"", screenClientID: "", screenIndex: 2, totalScreens: 5)
        func at(_ s: Int64, _ payload: Payload, session: String? = "s,1", meta m: Meta? = meta) -> Event {
            Event(
                time: Timestamp(microseconds: 1_793_491_200_000_000 + s * 1_000_123), session: session, profile: "p\n2",
                eventID: nil, placement: "", meta: m, payload: payload)
        }
        return [
            at(
                0,
                .stateUpdated(
                    StateUpdate(elementID: "goal", value: .select(Choice(id: "o1", value: "v, 1", label: "L \"1\""))))),
            at(
                1,
                .stateUpdated(
                    StateUpdate(
                        elementID: "many",
                        value: .multiSelect([
                            Choice(id: "b", value: "z", label: "Z"), Choice(id: "a", value: "y", label: "Y"),
                            Choice(id: "c", value: "z", label: "Z2"),
                        ])))),
            at(2, .stateUpdated(StateUpdate(elementID: "none", value: .multiSelect([])))),
            at(
                3, .stateUpdated(StateUpdate(elementID: "", value: .input(.text("two\nlines, \"quoted\"\r\n")))),
                session: nil),
            at(4, .stateUpdated(StateUpdate(elementID: "mail", value: .input(.email("a@b.c"))))),
            at(5, .stateUpdated(StateUpdate(elementID: "n", value: .input(.number(-0.1))))),
            at(6, .stateUpdated(StateUpdate(elementID: "n", value: .input(.number(1e21))))),
            at(7, .stateUpdated(StateUpdate(elementID: "d", value: .datePicker(DateParts(month: 6, day: 18))))),
            at(8, .analytics(.screenCompleted(elementID: "e", reply: "r,\"x\""))),
            at(9, .analytics(.unknown(name: "navigation_failed"))),
            at(10, .openPaywall(actionID: "")),
            at(11, .close(actionID: "x\ny")),
            at(12, .error(OnboardingError(domain: "webkit", code: -1_009, message: "")), meta: nil),
            at(13, .error(OnboardingError(domain: "", code: 0, message: "m,\n")), session: nil),
            at(
                14, .onboardingLoaded,
                meta: Meta(onboardingID: "", screenClientID: "c", screenIndex: 0, totalScreens: 0)),
        ]
    }

    @Test("Rows of random and awkward events read back as the events the store keeps")
    func rowsReadBack() throws {
        var random = RandomEvents(seed: 30)
        let events = Self.awkward + (0..<3_000).map { _ in random.event() }
        var parser = try CSVLineParser()
        try Array(CSVExport.header.utf8).withUnsafeBytes {
            try parser.readHeader(UnsafeRawBufferPointer(rebasing: $0.dropLast()), input: "t")
        }
        var failures: [String] = []
        for (i, event) in events.enumerated() {
            let row = Array(CSVExport.row(StoredEvent(seq: UInt64(i), event: event)).utf8.dropLast())
            let back = try row.withUnsafeBytes {
                try parser.parse($0, readableAfter: 0, lineNumber: i + 2, arrival: Timestamp(microseconds: 1))
            }
            if Store.normalized(back) != Store.normalized(event) {
                failures.append("\(event)\n\(back)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3).joined(separator: "\n\n"))")
    }

    @Test("The export's value, label and other query columns hold what 'events | select' shows")
    func columnsAreQueryFields() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = (Self.awkward.map { CanonicalJSON.line($0) + "\n" } + [Corpus(sessions: 30, seed: 4).text]).joined()
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: text).status == 0)
        let export = try boardwalk(["export", "--db", db, "--format", "csv"])
        #expect(export.status == 0)
        let rows = parseCSV(export.stdout)
        let header = rows[0]
        #expect(header == CSVExport.columns)
        let fields = [
            "time", "seq", "kind", "name", "onboarding", "screen", "screen_cid", "total_screens", "session", "profile",
            "action", "element", "element_type", "reply", "value", "label", "placement", "variation", "event_id",
        ]
        #expect(Array(header.prefix(fields.count)) == fields)
        let query = try boardwalk([
            "query", "--db", db, "--format", "csv", "events | select \(fields.joined(separator: ", ")) | sort seq",
        ])
        #expect(query.status == 0, "\(query.stderr)")
        let shown = parseCSV(query.stdout)
        #expect(shown[0] == fields)
        let exported = rows.dropFirst().map { Array($0.prefix(fields.count)) }.sorted { Int($0[1])! < Int($1[1])! }
        #expect(exported.count == shown.count - 1)
        for (a, b) in zip(exported, shown.dropFirst()) where a != b {
            Issue.record("export \(a)\nquery  \(b)")
            break
        }
    }

    @Test("export --format csv, then ingest --format csv into a new store: the same answers and the same events")
    func roundTrip() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Corpus(sessions: 200, seed: 11)
        let text = corpus.text + Self.awkward.map { CanonicalJSON.line($0) + "\n" }.joined()
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: text).status == 0)
        let csv = directory.appendingPathComponent("all.csv").path
        #expect(try boardwalk(["export", "--db", db, "--format", "csv", "-o", csv]).status == 0)
        let copy = directory.appendingPathComponent("copy.db").path
        let ingest = try boardwalk(["ingest", "--db", copy, "--format", "csv", csv])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(ingest.stdout.contains("rejected: 0\n"))
        for query in [
            "events | count by kind, name", "sessions | count by exit", "sessions | funnel",
            "sessions | stats count(), rate(completed), p50(duration) by variation",
            #"sessions | where completed | count by answer("goal")"#,
            "events | where kind == \"state_updated\" | count by element, value, label",
            "events | where name == \"screen_presented\" | stats p50(dwell), p90(dwell) by screen",
            "sessions | stats count() by onboarding, placement",
            "events | count by session | sort count desc | limit 5",
        ] {
            let a = try boardwalk(["query", "--db", db, "--format", "csv", query])
            let b = try boardwalk(["query", "--db", copy, "--format", "csv", query])
            #expect(a.status == 0 && a.stdout == b.stdout, "\(query)\n\(a.stdout)\n\(b.stdout)\n\(a.stderr)")
        }
        // The events themselves, but for the names of inferred sessions (each store numbers its own).
        func events(_ db: String) throws -> [String] {
            try readNDJSON(try boardwalk(["export", "--db", db]).stdout).map {
                CanonicalJSON.line($0.withoutInferredSession)
            }
        }
        #expect(try events(db) == events(copy))
        // gzip-compressed, through standard input, into a third store: the same again.
        let gz = try Data(contentsOf: URL(fileURLWithPath: csv)).gzipped(in: directory)
        let third = directory.appendingPathComponent("third.db").path
        let piped = try boardwalk(["ingest", "--db", third, "-f", "csv", "-"], stdinData: gz)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try events(third) == events(db))
    }

    @Test("A CSV given as NDJSON stops at its header with one hint, not a reject per line")
    func csvAsNDJSON() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let rejects = directory.appendingPathComponent("rejects.txt").path
        let path = try write(
            CSVExport.header + "2026-11-01T00:00:00.000000Z,0,close,close,o,0,c,1,s,,x,,,,,,,,,,,,\n", "e.csv")
        for arguments in [[path], ["-"]] {
            let r = try boardwalk(
                ["ingest", "--db", db, "--rejects", rejects] + arguments,
                stdin: arguments == ["-"] ? try String(contentsOfFile: path, encoding: .utf8) : nil)
            #expect(r.status == 1)
            let name = arguments == ["-"] ? "<stdin>" : path
            #expect(
                r.stderr.hasPrefix(
                    "Error: '\(name)' is CSV, not NDJSON: its first line is a header (time,seq,kind,name,onboarding,"
                        + "screen,screen_cid,total_screen…); ingest it with --format csv"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: rejects))
            // The store the run made holds nothing: it is not left behind, and nothing is said to stay in it.
            #expect(!FileManager.default.fileExists(atPath: db))
            #expect(!r.stderr.contains("committed before stays"), "\(r.stderr)")
        }
        let csv = try boardwalk(["ingest", "--db", db, "--format", "csv", "--rejects", rejects, path])
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(csv.stdout.contains("lines: 2\ningested: 1\n"), "\(csv.stdout)")
    }

    @Test("A bad row is rejected by its record number; a header without 'kind' stops the run")
    func badRows() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let rejects = directory.appendingPathComponent("rejects.txt").path
        let good = "2026-11-01T00:00:00.000000Z,0,close,close,o,0,c,1,s,,x,,,,,,,,,,,,\n"
        // Record 3 spans two lines (a quoted line break); record 4 has an unknown kind.
        let text =
            CSVExport.header + good + "2026-11-01T00:00:01Z,1,custom,custom,o,0,c,1,s,,\"a\nb\",,,,,,,,,,,,\n"
            + "2026-11-01T00:00:02Z,2,bogus,bogus,o,0,c,1,s,,,,,,,,,,,,,,\n"
            + "2026-11-01T00:00:03Z,3,close,close,o,zero,c,1,s,,,,,,,,,,,,,,\n"
        let path = try write(text, "bad.csv")
        let r = try boardwalk(["ingest", "--db", db, "-f", "csv", "--rejects", rejects, path])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stdout.contains("lines: 5\ningested: 2\nduplicates: 0\nrejected: 2"), "\(r.stdout)")
        let listed = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(listed.contains("\(path):4: line 4, kind: expected one of analytics, "), "\(listed)")
        #expect(listed.contains("\(path):5: line 5, screen: expected an integer, found \"zero\""), "\(listed)")
        let actions = try boardwalk(["query", "--db", db, "--format", "csv", "events | select action | sort action"])
        #expect(actions.stdout == "action\n\"a\nb\"\nx\n")
        let noKind = try write("time,session\n2026-11-01T00:00:00Z,s\n", "nokind.csv")
        let stopped = try boardwalk(["ingest", "--db", db, "-f", "csv", noKind])
        #expect(stopped.status == 1)
        #expect(
            stopped.stderr.hasPrefix(
                "Error: \(noKind): its first line is not the header of an events CSV (no 'kind' column)"),
            "\(stopped.stderr)")
    }

    @Test("A CSV file that grows is resumed after its checkpoint, its header read again from its start")
    func resumedCSV() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        func row(_ second: Int) -> String {
            "2026-11-01T00:00:0\(second)Z,\(second),custom,custom,o,0,c,1,s,,a\(second),,,,,,,,,,,,\n"
        }
        let path = try write(CSVExport.header + row(1) + row(2), "grow.csv")
        let first = try boardwalk(["ingest", "--db", db, "-f", "csv", path])
        #expect(first.stdout.contains("ingested: 2\n"), "\(first.stdout)")
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(row(3).utf8))
        try handle.close()
        let second = try boardwalk(["ingest", "--db", db, "-f", "csv", path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("lines: 1\ningested: 1\n"), "\(second.stdout)")
        #expect(second.stdout.contains("resumed: after 3 lines committed by an earlier run"), "\(second.stdout)")
        let actions = try boardwalk(["query", "--db", db, "--format", "csv", "events | select action | sort action"])
        #expect(actions.stdout == "action\na1\na2\na3\n")
    }
}
