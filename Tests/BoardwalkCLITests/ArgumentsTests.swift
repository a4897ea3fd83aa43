import Testing

@testable import BoardwalkCLI

private let options = [
    OptionSpec("sessions", short: "n", value: "N", help: ""),
    OptionSpec("seed", value: "S", help: ""),
    OptionSpec("strict", short: "s", help: ""),
    OptionSpec("verbose", short: "v", help: ""),
    OptionSpec("db", value: "DIR", help: ""),
]

@Suite("Argument parsing")
struct ArgumentsTests {
    @Test(
        "Accepted forms",
        arguments: [
            (["--sessions", "5"], ParsedArguments(values: ["sessions": ["5"]])),
            (["--sessions=5"], ParsedArguments(values: ["sessions": ["5"]])),
            (["--sessions="], ParsedArguments(values: ["sessions": [""]])),
            (["-n", "5"], ParsedArguments(values: ["sessions": ["5"]])),
            (["-n5"], ParsedArguments(values: ["sessions": ["5"]])),
            (["-n=5"], ParsedArguments(values: ["sessions": ["5"]])),
            (["-sv"], ParsedArguments(flags: ["strict", "verbose"])),
            (["-svn", "3"], ParsedArguments(values: ["sessions": ["3"]], flags: ["strict", "verbose"])),
            (["-", "a.ndjson"], ParsedArguments(positionals: ["-", "a.ndjson"])),
            (["--", "--strict", "-n"], ParsedArguments(positionals: ["--strict", "-n"])),
            (["a", "--strict", "b"], ParsedArguments(flags: ["strict"], positionals: ["a", "b"])),
            (["--seed", "1", "--seed", "2"], ParsedArguments(values: ["seed": ["1", "2"]])),
            (["--seed", "--strict"], ParsedArguments(values: ["seed": ["--strict"]])),
            (["--db", "/tmp/x y"], ParsedArguments(values: ["db": ["/tmp/x y"]])),
            (["-5"], ParsedArguments(positionals: ["-5"])),
        ])
    func accepted(arguments: [String], expected: ParsedArguments) throws {
        #expect(try parseArguments(arguments, options: options) == expected)
    }

    @Test(
        "Rejected forms, with their messages",
        arguments: [
            (["--nope"], "unknown option '--nope'"),
            (["--sesions", "3"], "unknown option '--sesions' (did you mean '--sessions'?)"),
            (["--strcit"], "unknown option '--strcit' (did you mean '--strict'?)"),
            (["--h"], "unknown option '--h'"),
            (["--sed", "1"], "unknown option '--sed' (did you mean '--seed'?)"),
            (["-x"], "unknown option '-x'"),
            (["-sx"], "unknown option '-x'"),
            (["-d", "dir"], "unknown option '-d' (did you mean '--db'?)"),
            (["-S"], "unknown option '-S'"),
            (["--=x"], "'--=x' has no option name before '='"),
            (["--sessions"], "option '--sessions' needs a value (N)"),
            (["-n"], "option '-n' needs a value (N)"),
            (["--strict=yes"], "option '--strict' takes no value"),
        ])
    func rejected(arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try parseArguments(arguments, options: options) }
    }

    @Test("Typed values")
    func typed() throws {
        let parsed = try parseArguments(["--sessions", "12", "--seed", "0x1F"], options: options)
        #expect(try parsed.integer("sessions") == 12)
        #expect(try parsed.unsigned("seed") == 31)
        #expect(try parsed.integer("absent") == nil)
        let bad = try parseArguments(["--sessions", "twelve"], options: options)
        #expect(throws: UsageError("option '--sessions' expects an integer, got 'twelve'")) {
            try bad.integer("sessions")
        }
        #expect(throws: UsageError("option '--sessions' must be between 0 and 10, got 12")) {
            try parsed.integer("sessions", in: 0...10)
        }
        #expect(throws: UsageError("option '--sessions' must be one of a, b, got '12'")) {
            try parsed.choice("sessions", among: ["a", "b"])
        }
    }

    @Test("Error rendering is a pure function of the error")
    func errorReports() {
        let usage = ErrorReport(UsageError("unknown option '--x'"), command: GenerateCommand.self)
        #expect(usage.exitCode == 64)
        #expect(usage.stream == .stderr)
        #expect(
            usage.text == """
                Error: unknown option '--x'
                Usage: \(GenerateCommand.usage)
                  See 'boardwalk generate --help' for more information.

                """)
        let tool = ErrorReport(UsageError("missing command"), command: nil)
        #expect(tool.text.hasSuffix("  See 'boardwalk --help' for more information.\n"))
        let runtime = ErrorReport(RuntimeError("the store is locked"), command: GenerateCommand.self)
        #expect(runtime == ErrorReport.init(RuntimeError("the store is locked"), command: nil))
        #expect(runtime.text == "Error: the store is locked\n")
        #expect(runtime.exitCode == 1)
    }

    @Test("The store directory: --db, else BOARDWALK_DB, else ./boardwalk.db")
    func database() throws {
        let sink = BufferSink()
        var invocation = Invocation(environment: [:], stdout: sink, stderr: sink)
        let none = ParsedArguments()
        #expect(invocation.database(none) == "./boardwalk.db")
        invocation.environment["BOARDWALK_DB"] = "/data/bw"
        #expect(invocation.database(none) == "/data/bw")
        #expect(invocation.database(ParsedArguments(values: ["db": ["/x"]])) == "/x")
    }

    @Test("Colour only on a terminal and never with NO_COLOR")
    func colour() {
        let sink = BufferSink()
        var invocation = Invocation(environment: [:], stdout: sink, stderr: sink, stdoutIsTerminal: true)
        #expect(invocation.colour(for: .stdout))
        #expect(!invocation.colour(for: .stderr))
        invocation.environment["NO_COLOR"] = "1"
        #expect(!invocation.colour(for: .stdout))
    }

    @Test("In-process run: output captured, status returned")
    func inProcess() {
        let out = BufferSink(), err = BufferSink()
        let invocation = Invocation(environment: [:], stdout: out, stderr: err)
        #expect(BoardwalkCLI.run(["--version"], invocation) == 0)
        #expect(out.text == "boardwalk \(BoardwalkCLI.version)\n")
        #expect(BoardwalkCLI.run(["generate", "--sessions", "x"], invocation) == 64)
        #expect(err.text.hasPrefix("Error: option '--sessions' expects an integer, got 'x'\nUsage: boardwalk generate"))
    }
}

@Suite("Output units and tables")
struct OutputTests {
    @Test(
        "Units",
        arguments: [
            (Units.count(999), "999"), (Units.count(1_234), "1.2 k"), (Units.count(34_500), "34.5 k"),
            (Units.count(1_234_567), "1.2 M"), (Units.count(250_000), "250 k"), (Units.count(-1_500), "-1.5 k"),
            (Units.duration(microseconds: 850), "850 µs"), (Units.duration(microseconds: 34_000), "34 ms"),
            (Units.duration(microseconds: 1_500), "1.5 ms"), (Units.duration(microseconds: 1_200_000), "1.2 s"),
            (Units.duration(microseconds: 150_000_000), "2.5 min"), (Units.percent(0.125), "12.5 %"),
            (Units.percent(1), "100.0 %"), (Units.bytes(512), "512 B"), (Units.bytes(1_258_291), "1.2 MiB"),
            (Units.decimal(-0.04, digits: 1), "0.0"), (Units.decimal(2.25, digits: 1), "2.3"),
        ])
    func units(actual: String, expected: String) {
        #expect(actual == expected)
    }

    @Test("Tables align columns; numbers to the right; wide characters counted as two; rules of '-' as query tables")
    func table() {
        var t = TextTable(headers: ["screen", "users"], alignments: [.left, .right])
        t.append(["welcome", "1.2 k"])
        t.append(["日本", "7"])
        #expect(
            t.render() == """
                screen   users
                -------  -----
                welcome  1.2 k
                日本         7

                """)
    }

    @Test("Cells and chart labels from stored data are shown as written: controls and bidi overrides escaped")
    func tableEscapesTerminalControls() {
        var t = TextTable(headers: ["answer", "n"], alignments: [.left, .right])
        t.append(["a\u{1B}[31mred", "1"])
        t.append(["\u{202E}txet", "2"])
        let text = t.render()
        #expect(!text.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" })
        #expect(text.contains(#"a\u{1b}[31mred"#) && text.contains(#"\u{202e}txet"#))
        let chart = Bars.chart([("x\ny", 1, "1")], share: nil, columns: 40, paint: Paint(enabled: false))
        #expect(chart.split(separator: "\n").count == 1 && chart.contains(#"x\ny"#))
    }

    @Test("Bars in eighths, scaled to the largest value")
    func bars() {
        #expect(Bars.bar(1, width: 4) == "████")
        #expect(Bars.bar(0.5, width: 4) == "██")
        #expect(Bars.bar(0.53125, width: 4) == "██▏")
        #expect(Bars.bar(0, width: 4) == "")
        #expect(Bars.bar(.nan, width: 4) == "")
        let chart = Bars.chart([("a", 10, "10"), ("bb", 5, "5")], share: 10, columns: 40, paint: Paint(enabled: false))
        let lines = chart.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasSuffix("10  (100.0 %)"))
        #expect(lines[1].hasSuffix(" 5   (50.0 %)"))
    }

    @Test("Chart labels fit a UUID; longer ones end in an ellipsis")
    func chartLabels() {
        let uuid = "450e8e2e-1936-432c-91b5-18db1663a8e2"
        let long = String(repeating: "x", count: 40)
        let lines = Bars.chart([(uuid, 2, "2"), (long, 1, "1")], share: nil, columns: 80, paint: Paint(enabled: false))
            .split(separator: "\n")
        #expect(lines[0].hasPrefix("  " + uuid + "  "))
        #expect(lines[1].hasPrefix("  " + String(repeating: "x", count: 35) + "…  "))
    }

    @Test("Paint adds escapes only when enabled")
    func paint() {
        #expect(Paint(enabled: false).bold("x") == "x")
        #expect(Paint(enabled: true).bold("x") == "\u{1B}[1mx\u{1B}[0m")
    }
}

@Suite("Progress line and REPL continuation")
struct ProgressAndReplTests {
    @Test("The progress line: events, rate, bytes, bar, percent, ETA; erased at the end")
    func progress() {
        let sink = BufferSink()
        let progress = Progress(sink: sink, paint: Paint(enabled: false))
        progress.update(events: 1_500, bytes: 3 << 20, total: 12 << 20)
        #expect(sink.text.hasPrefix("\r\u{1B}[2K  1.5 k events  "))
        #expect(sink.text.contains("3.0 MiB  █████"))
        #expect(sink.text.contains("25.0 %  ETA "))
        progress.update(events: 1_600, bytes: 4 << 20, total: 12 << 20)  // within 100 ms: not redrawn
        #expect(!sink.text.contains("1.6 k"))
        progress.finish()
        #expect(sink.text.hasSuffix("\r\u{1B}[2K"))
        let unknown = BufferSink()
        Progress(sink: unknown, paint: Paint(enabled: false)).update(events: 10, bytes: 100, total: nil)
        #expect(!unknown.text.contains("%") && !unknown.text.contains("ETA"))
    }

    @Test("Continuation and completion")
    func replContinuation() {
        #expect(Repl.continues("events |"))
        #expect(Repl.continues("events |  "))
        #expect(!Repl.continues("events | count"))
        #expect(!Repl.continues("events | where label == \"a|\""))
        #expect(Completion.matches("cou", in: Repl.stages) == ["count", "count()", "count_distinct("])
        #expect(Completion.matches("sess", in: Repl.stages) == ["sessions"])
        // Onboarding ids are offered quoted: typed with or without the opening quote, they complete.
        let ids = ["\"1b2c\"", "\"1bff\"", "\"7a00\""]
        #expect(Completion.matches("\"1b", in: ids) == ["\"1b2c\"", "\"1bff\""])
        #expect(Completion.matches("1b", in: ids) == ["\"1b2c\"", "\"1bff\""])
        #expect(Completion.matches("\"7", in: ids) == ["\"7a00\""])
        #expect(!String(cString: Completion.breakCharacters).contains("\""))
    }
}
