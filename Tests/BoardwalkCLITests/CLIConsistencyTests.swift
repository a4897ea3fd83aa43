import BoardwalkGenerator
import BoardwalkQuery
import Foundation
import Testing

@testable import BoardwalkCLI

/// Runs `boardwalk arguments` in this process, with captured output.
private func inProcess(_ arguments: [String]) -> (status: Int32, out: String, err: String) {
    let out = BufferSink(), err = BufferSink()
    let status = BoardwalkCLI.run(arguments, Invocation(environment: [:], stdout: out, stderr: err))
    return (status, out.text, err.text)
}

/// Runs the `boardwalk` executable with the file at `stdinPath` as its standard input (`ingest - < FILE`).
private func boardwalk(_ arguments: [String], stdinFile stdinPath: String) throws -> Execution {
    let process = Process()
    process.executableURL = boardwalkExecutable
    process.arguments = arguments
    process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
    let input = try #require(FileHandle(forReadingAtPath: stdinPath))
    let out = Pipe(), err = Pipe()
    process.standardInput = input
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // The summary and any error are a few lines: neither pipe fills before the process ends.
    process.waitUntilExit()
    return Execution(
        stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
        stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
        status: process.terminationStatus)
}

/// What `ingest` says about checkpoints and inputs matches docs/cli.md.
@Suite("ingest: inputs, checkpoints and duplicates as documented")
struct IngestInputTests {
    let directory: URL
    var db: String { directory.appendingPathComponent("db").path }
    init() throws { directory = try temporaryDirectory() }

    func write(_ text: String, _ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    static let meta = #""meta":{"onboarding_id":"o","screen_cid":"c","screen_index":0,"total_screens":2}"#

    @Test(
        "`ingest - < FILE` has no checkpoint: a second run resumes nothing, and lines without a time are stored again")
    func standardInputFromAFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // One line with a time and an event id, one with neither.
        let path = try write(
            #"{"timestamp":1793527200000,"event_id":"E-1","session_id":"s","type":"analytics","name":"screen_presented",\#(IngestInputTests.meta)}"#
                + "\n"
                + #"{"session_id":"s","type":"custom","action_id":"a",\#(IngestInputTests.meta)}"# + "\n",
            "in.ndjson")
        let first = try boardwalk(["ingest", "--db", db, "-"], stdinFile: path)
        #expect(first.status == 0, "\(first.stderr)")
        let second = try boardwalk(["ingest", "--db", db, "-"], stdinFile: path)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!second.stdout.contains("resumed"), "\(second.stdout)")
        #expect(second.stdout.contains("ingested: 1\nduplicates: 1\n"), "\(second.stdout)")
        let count = inProcess(["query", "--db", db, "--format", "csv", "events | count"])
        #expect(count.out == "count\n3\n", "\(count.err)")
    }

    @Test(
        "A line with an event id and no time, piped twice, is stored twice (the duplicate rule includes the time), as documented"
    )
    func eventIDWithoutTime() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let line =
            #"{"event_id":"E-1","session_id":"s","type":"analytics","name":"screen_presented",\#(IngestInputTests.meta)}"#
            + "\n"
        #expect(try boardwalk(["ingest", "--db", db, "-q", "-"], stdin: line).status == 0)
        let again = try boardwalk(["ingest", "--db", db, "-"], stdin: line)
        #expect(again.stdout.contains("ingested: 1\nduplicates: 0\n"), "\(again.stdout)")
        // Said where duplicates are explained: the command's help and docs/cli.md.
        let help = inProcess(["ingest", "--help"]).out.split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.joined(separator: " ")
        #expect(
            help.contains(
                "a line without a time gets the time it is read, so the same such line sent twice is stored twice"
            ))
    }

    @Test("A file named twice in one run is refused before anything is stored, by the same name or another")
    func sameFileTwice() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(
            #"{"timestamp":1793527200000,"session_id":"s","type":"custom","action_id":"a",\#(IngestInputTests.meta)}"#
                + "\n", "a.ndjson")
        let twice = inProcess(["ingest", "--db", db, path, path])
        #expect(twice.status == ExitCode.usage)
        #expect(
            twice.err.hasPrefix("Error: '\(path)' is named twice; a file is ingested once per run\n"), "\(twice.err)")
        #expect(twice.out.isEmpty)
        let link = directory.appendingPathComponent("b.ndjson").path
        try FileManager.default.linkItem(atPath: path, toPath: link)
        let linked = inProcess(["ingest", "--db", db, path, link])
        #expect(linked.status == ExitCode.usage)
        #expect(linked.err.hasPrefix("Error: '\(path)' and '\(link)' are the same file"), "\(linked.err)")
        #expect(!FileManager.default.fileExists(atPath: db), "nothing was stored, the store not even created")
    }

    @Test("A directory is refused with the inputs, like a missing file: no summary before the error")
    func directoryInput() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("dir")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let r = inProcess(["ingest", "--db", db, folder.path])
        #expect(r.status == ExitCode.failure)
        #expect(r.out.isEmpty, "a summary was printed: \(r.out)")
        #expect(r.err == "Error: cannot read '\(folder.path)': it is a directory\n")
        let missing = inProcess(["ingest", "--db", db, directory.appendingPathComponent("none").path])
        #expect(missing.status == ExitCode.failure && missing.out.isEmpty)
    }

    @Test("A rewritten file's summary says it was read again from its start")
    func restartedSummary() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let lines = (0..<200).map {
            #"{"timestamp":\#(1793527200000 + $0),"event_id":"a\#($0)","session_id":"s","type":"custom","action_id":"x",\#(IngestInputTests.meta)}"#
        }
        let path = try write(lines.joined(separator: "\n") + "\n", "ev.ndjson")
        #expect(inProcess(["ingest", "--db", db, "-q", path]).status == 0)
        // Same first 150 lines (over 4 KiB), other lines after them: written in place.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(
            contentsOf: Data(
                (lines.prefix(150)
                    + lines.suffix(50).map { $0.replacingOccurrences(of: #""event_id":"a"#, with: #""event_id":"b"#) }
                    + lines.suffix(50))
                    .joined(separator: "\n").utf8 + [0x0A]))
        try handle.close()
        let r = inProcess([
            "ingest", "--db", db, "--rejects", directory.appendingPathComponent("rejects.txt").path, path,
        ])
        #expect(r.status == 0, "\(r.err)")
        #expect(!r.out.contains("resumed"))
        #expect(
            r.out.contains(
                "restarted: \(path) changed before where an earlier run stopped (after 200 lines): read from its start"),
            "\(r.out)")
        #expect(r.out.contains("ingested: 50\nduplicates: 200\n"), "\(r.out)")
    }
}

/// The demo draws the same charts from the same store on every run (ties are not left in a dictionary's order,
/// which changes from one process to the next), and its dwell rows line up.
@Suite("demo: ties and alignment")
struct DemoOrderTests {
    /// Two onboardings with five sessions each; `onbA`'s end in every way, two of them abandoned.
    static func corpus() -> String {
        var lines: [String] = []
        var t: Int64 = 1_793_527_200_000
        func line(_ session: String, _ onboarding: String, _ screen: Int, _ body: String, after ms: Int64) {
            t += ms
            lines.append(
                #"{"timestamp":\#(t),"session_id":"\#(session)",\#(body),"meta":{"onboarding_id":"\#(onboarding)","screen_cid":"c\#(screen)","screen_index":\#(screen),"total_screens":3}}"#
            )
        }
        let presented = #""type":"analytics","name":"screen_presented""#
        for (i, ending) in [
            "", "", #""type":"close","action_id":"x""#, #""type":"analytics","name":"onboarding_completed""#,
            #""type":"error","error":{"domain":"WebKit","code":4200,"message":"boom"}"#,
        ].enumerated() {
            line("a\(i)", "onbA", 0, presented, after: 1_000)
            line("a\(i)", "onbA", 1, presented, after: Int64(2_000 + 9_000 * i))
            if !ending.isEmpty { line("a\(i)", "onbA", 2, ending, after: 500) }
        }
        for i in 0..<5 { line("b\(i)", "onbB", 0, presented, after: 1_000) }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("Ties are ordered by name, and the busiest onboarding of two with as many sessions is the first by id")
    func ties() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.ndjson").path
        try DemoOrderTests.corpus().write(toFile: input, atomically: false, encoding: .utf8)
        let db = directory.appendingPathComponent("db").path
        let ingest = inProcess(["ingest", "--db", db, "-q", input])
        #expect(ingest.status == 0, "\(ingest.err)")
        var outputs: Set<String> = []
        // Each run in a process of its own: a dictionary's order is seeded per process.
        for _ in 0..<3 {
            let r = try boardwalk(["demo", "--db", db])
            #expect(r.status == 0, "\(r.stderr)")
            outputs.insert(r.stdout)
            let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            // Sessions per onboarding: onbA then onbB (5 each); the funnel is onbA's.
            let bars = lines.drop { !$0.hasPrefix("Sessions per onboarding") }.dropFirst(3).prefix(2)
            #expect(
                bars.map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["onbA", "onbB"], "\(r.stdout)")
            #expect(r.stdout.contains(#"sessions | where onboarding == "onbA" | funnel"#))
            // How sessions end: abandoned (2), then the ties by name.
            let exits = lines.drop { !$0.hasPrefix("How sessions end") }.dropFirst(3).prefix(4)
            #expect(
                exits.map { $0.split(separator: " ").first.map(String.init) ?? "" } == [
                    "abandoned", "closed", "completed", "error",
                ],
                "\(r.stdout)")
            // Time on each screen: `p90` and the note start in the same column on every row.
            let dwell = Array(lines.drop { !$0.hasPrefix("Time on each screen") }.dropFirst(3).prefix { !$0.isEmpty })
            #expect(dwell.count == 2, "\(r.stdout)")
            let columns = Set(
                dwell.map { row in row.range(of: "p90").map { row.distance(from: row.startIndex, to: $0.lowerBound) } })
            #expect(columns.count == 1, "ragged rows:\n\(dwell.joined(separator: "\n"))")
        }
        #expect(outputs.count == 1, "the runs drew different charts")
    }

    @Test("ranked: by value, largest first, ties by key")
    func ranked() {
        let counts = ["error": 1.0, "abandoned": 2, "closed": 1, "completed": 1]
        #expect(DemoAnswers.ranked(counts).map(\.key) == ["abandoned", "closed", "completed", "error"])
    }

    @Test("alignedColumns pads each column to its widest and right-aligns the numbers")
    func aligned() {
        let rows = DemoAnswers.alignedColumns(
            [["p50 ", "4.0 s", ", p90 ", "11.2 s", ""], ["p50 ", "15.0 s", ", p90 ", "1.0 s", ", 1 ended here"]],
            rightAligned: [1, 3])
        #expect(rows == ["p50  4.0 s, p90 11.2 s              ", "p50 15.0 s, p90  1.0 s, 1 ended here"])
    }
}

/// REPL details: `.explain` locations, completion, the history file.
@Suite("REPL: .explain locations, completion, history file")
struct ReplPolishTests {
    static let source = InMemoryEventSource(Array(SyntheticData(sessions: 5, seed: 2).events()))

    @Test("A piped `.explain` error points at its line of the input and the column in that line, as other errors do")
    func explainLocation() {
        let out = BufferSink(), err = BufferSink()
        let invocation = Invocation(environment: [:], stdout: out, stderr: err)
        let console = QueryConsole(source: ReplPolishTests.source, invocation: invocation)
        let status = Repl(console: console, invocation: invocation, completionWords: [], stats: nil)
            .runPiped(["events | count", ".explain events | bogus"])
        #expect(status == ExitCode.partial)
        #expect(
            err.text.contains("--> stdin:2:19\n2 | .explain events | bogus\n  |                   ^^^^^"), "\(err.text)"
        )
    }

    @Test("A unique completion is the rest of the word, then a space, but no space after a function's `(`")
    func insertion() {
        #expect(Completion.matches("p5", in: Repl.completionVocabulary([])) == ["p50("])
        #expect(Completion.insertion(completing: "p5", with: "p50(") == "0(")
        #expect(Completion.insertion(completing: "sess", with: "sessions") == "ions ")
        #expect(
            Completion.insertion(completing: "1b", with: "\"1b2c\"") == nil,
            "an id typed without its quote is left to libedit")
    }

    @Test("A history file that cannot be kept is named in one warning; a usable one is not")
    func historyWarning() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = Repl.historyProblem(directory.path)
        #expect(folder?.warning.contains("is a directory") == true && folder?.readable == false)
        #expect(
            Repl.historyProblem(directory.appendingPathComponent("missing/h").path)?.warning.contains(
                "cannot be created") == true)
        #expect(Repl.historyProblem(directory.appendingPathComponent("h").path) == nil)
        let file = directory.appendingPathComponent("h2").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(Repl.historyProblem(file) == nil)
    }

    // Tests run as root here and in CI, and root may write a 0444 file: root gets an immutable file instead, and
    // where even that is not allowed (no CAP_LINUX_IMMUTABLE) the test is reported as skipped, not passed.
    @Test(
        "A history file that is not writable is named in one warning, and still read",
        .enabled(if: canMakeUnwritableFiles()))
    func historyNotWritable() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("h").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let undo = try #require(makeUnwritable(file))
        defer { undo() }
        let readOnly = Repl.historyProblem(file)
        #expect(readOnly?.warning.contains("is not writable") == true && readOnly?.readable == true)
    }
}
