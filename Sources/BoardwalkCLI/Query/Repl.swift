import Boardwalk
@preconcurrency import CEditLine

#if canImport(Glibc)
    import Glibc
#endif

/// The read–eval–print loop over a ``QueryConsole``.
///
/// On a terminal: libedit line editing, persistent history, tab completion, prompts. Fed by a pipe: reads
/// queries line by line without prompts, runs each, and reports whether any failed. In both, a line ending
/// in `|` (a `#` comment after it aside) continues on the next line, blank and comment lines inside a continued
/// query keep it open, and lines starting with `.` are dot-commands.
final class Repl {
    let console: QueryConsole
    /// The streams; `.output FILE` sends results (and what dot-commands print) to FILE until `.output` alone.
    private(set) var invocation: Invocation
    /// Standard output as the REPL started with it, for `.output` to go back to, and whether it is a terminal.
    private let standardOutput: any OutputSink
    private let standardOutputIsTerminal: Bool
    /// The file `.output` writes, while it does.
    private var outputFile: (path: String, descriptor: Int32, sink: FileSink)?
    /// Echo each query before its result, and a blank line between results (`query -` with tables, as
    /// `sqlite3 -echo` does).
    var echoQueries = false
    private var queriesEchoed = 0
    /// Files `.read` is reading, innermost last (a file that reads itself is refused).
    private var reading: [String] = []
    /// Extra words for completion (onboarding ids, element ids found in the store).
    let completionWords: [String]
    /// Prints `.stats`; `nil` when the source is not a store.
    let stats: (() throws -> String)?
    private(set) var failures = 0
    private var quit = false

    init(console: QueryConsole, invocation: Invocation, completionWords: [String], stats: (() throws -> String)?) {
        self.console = console
        self.invocation = invocation
        standardOutput = invocation.stdout
        standardOutputIsTerminal = invocation.stdoutIsTerminal
        self.completionWords = completionWords
        self.stats = stats
    }

    static let stages = [
        "events", "sessions", "where", "count", "by", "stats", "top", "funnel", "paths", "histogram", "sort", "limit",
        "select", "explain", "within", "mode", "ignoring", "after", "before", "depth", "and", "or", "not", "in", "asc",
        "desc",
        "count()", "count_distinct(", "sum(", "avg(", "min(", "max(", "p50(", "p90(", "p95(", "p99(",
        "percentile(", "rate(", "answer(", "did(", "reached(", "now()",
    ]

    /// Every word tab completion offers, each once (events and sessions share fields such as `placement`), in the
    /// order they are listed: stages and functions, fields, dot-commands, then `extra` (quoted onboarding ids).
    static func completionVocabulary(_ extra: [String]) -> [String] {
        var seen = Set<String>()
        return
            (stages + EventField.allCases.map(\.rawValue) + SessionField.allCases.map(\.rawValue) + dotCommands + extra)
            .filter { seen.insert($0).inserted }
    }

    static let dotCommands = [
        ".help", ".fields", ".onboardings", ".stats", ".format", ".mode", ".timing", ".timer", ".ignore-damaged", ".tz",
        ".threads", ".explain",
        ".output", ".read", ".quit",
    ]

    static let help = """
        Queries are a source and stages joined by |, for example:
          events | count by kind
          sessions | where completed | count by answer("goal")
          sessions | funnel
          events | where name == "screen_presented" | stats p50(dwell), p90(dwell) by screen
        A line ending in | continues on the next line; a query ending in \\G prints each row as lines of
        column = value. Tab completes stages, fields and onboarding ids. On a terminal, a result longer than
        the screen goes through $PAGER (less by default; PAGER= turns it off). Ctrl-C cancels a running query;
        Ctrl-D or .quit leaves.

        Dot-commands:
          .help                     this text
          .fields                   the fields of events and sessions
          .onboardings              the onboardings in the store, with their sessions
          .stats                    what the store (or the generated data) holds
          .format [table|json|csv]  how results are printed (now: %FORMAT%); alone, prints it
          .mode [table|line|json|csv]  the same, and line: each row as lines of column = value (now: %MODE%)
          .timing [on|off]          print time and rows read after each query (now: %TIMING%); alone, prints it
          .timer [on|off]           the same as .timing
          .ignore-damaged [on|off]  read around damaged blocks of the store, with a note of what was skipped
                                    (now: %DAMAGED%); alone, prints it
          .threads [N]              scan with at most N threads (now: %THREADS%); alone, prints it
          .tz [ZONE]                the zone of day(t), hour(t), … (now: %ZONE%): UTC, +03:00, Europe/Berlin
          .explain QUERY            how QUERY would read the store
          .output [FILE]            send results to FILE (emptied first); alone, back to the screen
          .read FILE                run the queries and dot-commands of FILE
          .quit                     leave (also .exit)

        """

    // MARK: Input

    /// Handles one complete input (a query, possibly multi-line, or a dot-command).
    /// - Parameter origin: where the input was read (the pipe and its first line), for error locations.
    func handle(_ input: String, origin: (name: String, line: Int)? = nil) {
        // Leading blank lines move the query's first line down.
        var origin = origin
        var text = Substring(input)
        while let newline = text.firstIndex(of: "\n"),
            text[..<newline].allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" })
        {
            text = text[text.index(after: newline)...]
            origin?.line += 1
        }
        let trimmed = String(text).trimmingSpaces()
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return }
        if trimmed.hasPrefix(".") {
            if !dotCommand(trimmed, origin: origin) { failures += 1 }
            return
        }
        // `events | … \G`: this result as rows of `column = value` (as MySQL's and clickhouse-client's `\G`).
        var query = trimmed
        let bare = Repl.withoutComment(trimmed).trimmingSpaces()
        let vertical = bare.hasSuffix("\\G")
        if vertical { query = String(bare.dropLast(2)) }
        if echoQueries && (console.format == .table || console.vertical || vertical) {
            if queriesEchoed > 0 { invocation.out("\n") }
            invocation.out(trimmed + "\n")
            queriesEchoed += 1
        }
        if !console.run(query, origin: origin, forceVertical: vertical) { failures += 1 }
    }

    /// Whether `line` asks for another line: it ends in `|`, a `#` comment after it aside.
    static func continues(_ line: String) -> Bool { withoutComment(line).trimmingSpaces().hasSuffix("|") }

    /// Whether `line` leaves the query being read open: it ends in `|`, or the query so far is open
    /// (`pending`) and the line holds nothing but spaces or a comment, which the query language skips.
    static func keepsOpen(_ line: String, pending: Bool) -> Bool {
        continues(line) || (pending && withoutComment(line).trimmingSpaces().isEmpty)
    }

    /// `line` up to a `#` that starts a comment: one outside a string literal (strings are in double quotes,
    /// with `\` escapes, and end on their line, as the query language's lexer reads them).
    static func withoutComment(_ line: String) -> String {
        var inString = false
        var escaped = false
        for (offset, byte) in line.utf8.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "#") {
                return String(decoding: line.utf8.prefix(offset), as: UTF8.self)
            }
        }
        return line
    }

    /// Reads queries from a pipe until its end, or until Ctrl-C cancels one of them (without a prompt to go back
    /// to, the run stops there).
    /// - Returns: the exit status: 0 when every query succeeded, 2 when any failed, 130 when Ctrl-C stopped it.
    func runPiped(_ lines: some Sequence<String>) -> Int32 {
        runLines(lines, source: "stdin")
        closeOutput()
        if console.cancellation.isCancelled { return ExitCode.interrupted }
        return failures == 0 ? ExitCode.success : ExitCode.partial
    }

    /// Runs the queries and dot-commands of `lines` (continued lines joined, as typed), errors located by `source`
    /// and the line; stops after `.quit` or a query Ctrl-C cancelled.
    private func runLines(_ lines: some Sequence<String>, source: String) {
        var pending = ""
        var number = 0
        var firstLine = 1
        // Each query clears the flag as it starts: set after one, it was Ctrl-C during that one.
        var interrupted: Bool { console.cancellation.isCancelled }
        for line in lines {
            number += 1
            if pending.isEmpty { firstLine = number }
            let open = !pending.isEmpty
            pending += pending.isEmpty ? line : "\n" + line
            if Repl.keepsOpen(line, pending: open) { continue }
            handle(pending, origin: (source, firstLine))
            pending = ""
            if quit || interrupted { break }
        }
        if !pending.isEmpty, !quit, !interrupted {
            handle(pending, origin: (source, firstLine))
        }
    }

    /// libedit decodes what is typed through the C library's character type, which is plain ASCII in the
    /// default "C" locale: `é` or `中文` would vanish from the line. Take the environment's locale, and UTF-8
    /// when that is "C"/"POSIX" (what terminals send). Only `LC_CTYPE`: number formatting is untouched.
    static func useUTF8CharacterType() {
        let chosen = setlocale(LC_CTYPE, "").map { String(cString: $0) }
        if chosen == nil || chosen == "C" || chosen == "POSIX" {
            _ = setlocale(LC_CTYPE, "C.UTF-8")
        }
    }

    /// The interactive loop on a terminal, with libedit.
    func runInteractive(historyPath: String?) -> Int32 {
        Completion.words = Repl.completionVocabulary(completionWords)
        Completion.context = contextCompletion()
        Repl.useUTF8CharacterType()
        installLineEditing()
        var historyPath = historyPath
        var warnedAboutHistory = false
        if let path = historyPath, let problem = Repl.historyProblem(path) {
            invocation.err("warning: \(problem.warning)\n")
            warnedAboutHistory = true
            if !problem.readable { historyPath = nil }
        }
        if let historyPath { _ = read_history(historyPath) }
        stifle_history(2000)
        if invocation.stdoutIsTerminal { console.pager = Pager.from(environment: invocation.environment) }
        invocation.out("Boardwalk \(BoardwalkCLI.version). Type .help for help, .quit to leave.\n")
        invocation.stdout.flush()
        var pending = ""
        while !quit {
            interruptFlag.reset()
            let prompt = pending.isEmpty ? "boardwalk> " : "       ...> "
            guard let raw = readline(prompt) else {
                if interruptFlag.isCancelled {
                    // Ctrl-C while editing: drop the input so far, new prompt.
                    standardOutput.write("\n")
                    standardOutput.flush()
                    pending = ""
                    continue
                }
                standardOutput.write("\n")
                break  // Ctrl-D
            }
            let line = String(cString: raw)
            free(raw)
            let open = !pending.isEmpty
            pending += pending.isEmpty ? line : "\n" + line
            if Repl.keepsOpen(line, pending: open) { continue }
            let input = pending
            pending = ""
            if !input.trimmingSpaces().isEmpty { _ = add_history(input) }
            handle(input)
            invocation.stdout.flush()
            invocation.stderr.flush()
        }
        closeOutput()
        if let historyPath, write_history(historyPath) != 0, !warnedAboutHistory {
            invocation.err("warning: could not save the history in '\(historyPath)'\n")
        }
        return ExitCode.success
    }

    /// Why the history file at `path` will not be kept: one warning line (without `warning: `), and whether the file
    /// can still be read (an existing file this user may not write); `nil` when it can be read and written (or
    /// created). Said once, at start: libedit fails silently on either.
    static func historyProblem(_ path: String) -> (warning: String, readable: Bool)? {
        var st = stat()
        if stat(path, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR {
                return (
                    "the history file '\(path)' is a directory: history is neither read nor saved "
                        + "(point $BOARDWALK_HISTORY at a file)", false
                )
            }
            if access(path, W_OK) != 0 {
                return (
                    "the history file '\(path)' is not writable (\(String(cString: strerror(errno)))): this "
                        + "session's history is not saved", true
                )
            }
            return nil
        }
        let slash = path.lastIndex(of: "/")
        let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        if access(parent, W_OK) != 0 {
            return (
                "the history file '\(path)' cannot be created (\(parent): \(String(cString: strerror(errno)))): "
                    + "history is not saved", false
            )
        }
        return nil
    }

    // MARK: Dot-commands

    /// - Parameter origin: where the command was read (the pipe and its line), for `.explain`'s error locations.
    /// - Returns: whether the command succeeded.
    func dotCommand(_ text: String, origin: (name: String, line: Int)? = nil) -> Bool {
        let parts = text.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let command = String(parts[0])
        let argument = parts.count > 1 ? String(parts[1]).trimmingSpaces() : ""
        /// An error, located (`stdin:3: `) when the command was read from a pipe, as query errors are.
        func fail(_ message: String) -> Bool {
            invocation.err("Error: " + (origin.map { "\($0.name):\($0.line): " } ?? "") + message + "\n")
            return false
        }
        // `.stats all` or `.quit now`: an argument these commands would ignore is a mistake to say, not to drop (a
        // `#` comment after them aside).
        if [".help", ".fields", ".onboardings", ".stats", ".quit", ".exit"].contains(command),
            !Repl.withoutComment(argument).trimmingSpaces().isEmpty
        {
            return fail("\(command) takes no argument")
        }
        switch command {
        case ".help":
            invocation.out(
                Repl.help.replacing("%FORMAT%", with: console.format.rawValue)
                    .replacing("%MODE%", with: console.vertical ? "line" : console.format.rawValue)
                    .replacing("%TIMING%", with: console.timing ? "on" : "off")
                    .replacing("%DAMAGED%", with: console.ignoreDamaged ? "on" : "off")
                    .replacing("%ZONE%", with: console.timeZone)
                    .replacing("%THREADS%", with: "\(console.threads)"))
        case ".fields":
            invocation.out("events:   " + EventField.allCases.map(\.rawValue).joined(separator: ", ") + "\n")
            invocation.out(
                "sessions: " + SessionField.allCases.map(\.rawValue).joined(separator: ", ")
                    + ", answer(\"element\"), did(kind or name), reached(n)\n")
        case ".onboardings":
            return console.run("sessions | count by onboarding")
        case ".stats":
            guard let stats else { return summary() }
            do {
                invocation.out(try stats())
            } catch {
                return fail("\(error)")
            }
        case ".format":
            if argument.isEmpty {
                invocation.out("format: \(console.format.rawValue)\n")
                return true
            }
            guard let format = ResultTable.Format(rawValue: argument) else {
                return fail(".format takes one of \(ResultTable.Format.names.joined(separator: ", "))")
            }
            console.format = format
            console.vertical = false
        case ".mode":
            if argument.isEmpty {
                invocation.out("mode: \(console.vertical ? "line" : console.format.rawValue)\n")
                return true
            }
            if argument == "line" {
                console.vertical = true
            } else if let format = ResultTable.Format(rawValue: argument) {
                console.format = format
                console.vertical = false
            } else {
                return fail(".mode takes one of table, line, json, csv")
            }
        case ".timing", ".timer":
            switch argument {
            case "": invocation.out("timing: \(console.timing ? "on" : "off")\n")
            case "on": console.timing = true
            case "off": console.timing = false
            default:
                return fail("\(command) takes on or off")
            }
        case ".ignore-damaged":
            switch argument {
            case "": invocation.out("ignore-damaged: \(console.ignoreDamaged ? "on" : "off")\n")
            case "on": console.ignoreDamaged = true
            case "off": console.ignoreDamaged = false
            default:
                return fail("\(command) takes on or off")
            }
        case ".threads":
            let count = Repl.withoutComment(argument).trimmingSpaces()
            if count.isEmpty {
                invocation.out("threads: \(console.threads)\n")
                return true
            }
            guard let n = Int(count), (1...QueryConsole.maxThreads).contains(n) else {
                return fail(".threads takes a number from 1 to \(QueryConsole.maxThreads)")
            }
            console.threads = n
        case ".tz":
            let zone = Repl.withoutComment(argument).trimmingSpaces()
            if zone.isEmpty {
                invocation.out("time zone: \(console.timeZone)\n")
                return true
            }
            do {
                _ = try Query.parse("events", timeZone: zone)
            } catch {
                return fail("\(error.message)")
            }
            console.timeZone = zone
        case ".explain":
            guard !argument.isEmpty else {
                return fail(".explain takes a query")
            }
            // The query's diagnostic shows the whole line and counts columns from its start, as other errors of
            // the REPL do (`stdin:3:18`, not `query:1:10`).
            return console.explain(argument, origin: origin, linePrefix: String(text.dropLast(argument.count)))
        case ".output":
            return output(to: argument, fail: fail)
        case ".read":
            guard !argument.isEmpty else { return fail(".read takes a file") }
            return read(argument, fail: fail)
        case ".quit", ".exit":
            quit = true
        default:
            return fail("unknown command '\(command)'; .help lists the commands")
        }
        return true
    }

    /// `.output FILE`: results to FILE (created, or emptied); `.output` alone (or `-`): back to standard output.
    private func output(to path: String, fail: (String) -> Bool) -> Bool {
        closeOutput()
        guard !path.isEmpty, path != "-" else { return true }
        if let store = console.source as? StoreEventSource, FileSafety.isStoreFile(path, store: store.store.path) {
            return fail("'\(path)' is one of the store's own files; .output to another")
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return fail("cannot write '\(path)': \(String(cString: strerror(errno)))") }
        let sink = FileSink(descriptor: descriptor, buffered: true)
        outputFile = (path, descriptor, sink)
        setStandardOutput(sink)
        return true
    }

    /// Ends `.output`: the file is flushed and closed, and results go to standard output again.
    private func closeOutput() {
        guard let file = outputFile else { return }
        file.sink.flush()
        if let code = file.sink.writeError {
            invocation.err("Error: could not write all of '\(file.path)': \(String(cString: strerror(code)))\n")
        }
        close(file.descriptor)
        outputFile = nil
        setStandardOutput(standardOutput)
    }

    private func setStandardOutput(_ sink: any OutputSink) {
        // A file is no terminal: no pager for it.
        let terminal = sink === standardOutput && standardOutputIsTerminal
        invocation.stdout = sink
        invocation.stdoutIsTerminal = terminal
        console.invocation.stdout = sink
        console.invocation.stdoutIsTerminal = terminal
    }

    /// `.read FILE`: its queries and dot-commands, as if typed, errors located by the file's name and line.
    private func read(_ path: String, fail: (String) -> Bool) -> Bool {
        guard !reading.contains(path) else { return fail(".read of '\(path)' inside itself") }
        guard let file = fopen(path, "r") else {
            return fail("cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        let failed = ferror(file) != 0 ? errno : 0
        fclose(file)
        if failed != 0 { return fail("cannot read '\(path)': \(String(cString: strerror(failed)))") }
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        if lines.last == "" { lines.removeLast() }
        if let first = lines.first, first.unicodeScalars.first == "\u{FEFF}" { lines[0] = String(first.dropFirst()) }
        reading.append(path)
        defer { reading.removeLast() }
        // Each of its queries that fails counts as a failure of its own, located in the file.
        runLines(lines, source: path)
        return true
    }

    /// `.stats` for a source that is not a store (`--generated`): its events, sessions and onboardings, one
    /// labelled line each, as `boardwalk stats` begins.
    private func summary() -> Bool {
        let queries = [
            ("events", "events | count"), ("sessions", "sessions | count"),
            ("onboardings", "sessions | count by onboarding"),
        ]
        var out = ""
        for (label, text) in queries {
            do {
                let table = try console.execute(try Query.parse(text)).table
                // Sessions without an onboarding are grouped under an absent key, which is no onboarding.
                let n =
                    label == "onboardings"
                    ? table.rows.filter { $0.first?.isNull == false }.count
                    : (table.rows.first?.first?.intValue ?? 0)
                out += label.padding(to: 20) + Units.count(n) + (n >= 1000 ? " (\(n))" : "") + "\n"
            } catch {
                console.report(error)
                return false
            }
        }
        invocation.out(out)
        return true
    }

    /// What Tab offers by context: this source's onboarding ids, the element ids it has answers for (asked once,
    /// when first offered), and the dot-commands at the start of a line.
    private func contextCompletion() -> ContextCompletion {
        var known: [String]?
        let console = self.console
        return ContextCompletion(
            onboardings: completionWords.filter { $0.hasPrefix("\"") },
            elements: {
                if let known { return known }
                let query = try? Query.parse("events | where element is present | top 1000 element")
                let rows = (try? query?.run(on: console.source).rows) ?? []
                known = rows.compactMap { $0.first?.stringValue }.sorted()
                return known!
            },
            lineStarts: Repl.dotCommands)
    }

    // MARK: libedit

    private func installLineEditing() {
        rl_readline_name = Completion.readlineName
        // libedit must not install its own SIGINT handling: ours cancels queries and abandons lines.
        rl_catch_signals = 0
        rl_attempted_completion_function = { text, start, _ in
            guard let text else { return nil }
            // The text before the word (libedit counts characters): a word right after an opening quote (`== "` then
            // Tab: the quote is not part of the word) completes to the rest of a quoted id.
            let before = rl_line_buffer.map { String(String(cString: $0).unicodeScalars.prefix(Int(start))) } ?? ""
            Completion.candidates =
                Completion.context.candidates(before: before, word: String(cString: text))
                ?? Completion.matches(
                    String(cString: text), in: Completion.words,
                    atLineStart: before.allSatisfy { $0 == " " || $0 == "\t" }, afterQuote: before.hasSuffix("\""))
            Completion.index = 0
            rl_attempted_completion_over = 1
            // One candidate that extends the word: inserted here, and no matches handed back. libedit rings the
            // bell after every completion it inserts itself, a unique one too, and appends a space even after
            // `p50(`, where the argument follows.
            let word = String(cString: text)
            if Completion.candidates.count == 1,
                let rest = Completion.insertion(completing: word, with: Completion.candidates[0])
            {
                if !rest.isEmpty {
                    _ = rl_insert_text(rest)
                    // Shown by a redisplay, as if a key bound to it had been typed next: called from here, libedit
                    // does not redraw the line (its `rl_redisplay` pushes ^R, which readline's bindings make a search).
                    _ = rl_insert(1, Completion.redisplayKey)
                }
                return nil
            }
            return rl_completion_matches(text) { _, _ in Completion.next() }
        }
        rl_basic_word_break_characters = Completion.breakCharacters
        _ = rl_initialize()
        // A key for the completion above to push: ^], which a user rarely types and which then only redraws the line.
        _ = rl_parse_and_bind("bind ^] ed-redisplay")
    }
}
