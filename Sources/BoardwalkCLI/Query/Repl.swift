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
    let invocation: Invocation
    /// Extra words for completion (onboarding ids, element ids found in the store).
    let completionWords: [String]
    /// Prints `.stats`; `nil` when the source is not a store.
    let stats: (() throws -> String)?
    private(set) var failures = 0
    private var quit = false

    init(console: QueryConsole, invocation: Invocation, completionWords: [String], stats: (() throws -> String)?) {
        self.console = console
        self.invocation = invocation
        self.completionWords = completionWords
        self.stats = stats
    }

    static let stages = [
        "events", "sessions", "where", "count", "by", "stats", "top", "funnel", "histogram", "sort", "limit",
        "select", "explain", "within", "mode", "ignoring", "and", "or", "not", "in", "asc", "desc",
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
        ".help", ".fields", ".onboardings", ".stats", ".format", ".timing", ".tz", ".explain", ".quit",
    ]

    static let help = """
        Queries are a source and stages joined by |, for example:
          events | count by kind
          sessions | where completed | count by answer("goal")
          sessions | funnel
          events | where name == "screen_presented" | stats p50(dwell), p90(dwell) by screen
        A line ending in | continues on the next line. Tab completes stages, fields and onboarding ids.
        Ctrl-C cancels a running query; Ctrl-D or .quit leaves.

        Dot-commands:
          .help                     this text
          .fields                   the fields of events and sessions
          .onboardings              the onboardings in the store, with their sessions
          .stats                    what the store (or the generated data) holds
          .format [table|json|csv]  how results are printed (now: %FORMAT%); alone, prints it
          .timing [on|off]          print time and rows read after each query (now: %TIMING%); alone, prints it
          .tz [ZONE]                the zone of day(t), hour(t), … (now: %ZONE%): UTC, +03:00, Europe/Berlin
          .explain QUERY            how QUERY would read the store
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
        if !console.run(trimmed, origin: origin) { failures += 1 }
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
            handle(pending, origin: ("stdin", firstLine))
            pending = ""
            if quit || interrupted { break }
        }
        if !pending.isEmpty, !quit, !interrupted {
            handle(pending, origin: ("stdin", firstLine))
        }
        if interrupted { return ExitCode.interrupted }
        return failures == 0 ? ExitCode.success : ExitCode.partial
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
        invocation.out("Boardwalk \(BoardwalkCLI.version). Type .help for help, .quit to leave.\n")
        invocation.stdout.flush()
        var pending = ""
        while !quit {
            interruptFlag.reset()
            let prompt = pending.isEmpty ? "boardwalk> " : "       ...> "
            guard let raw = readline(prompt) else {
                if interruptFlag.isCancelled {
                    // Ctrl-C while editing: drop the input so far, new prompt.
                    invocation.out("\n")
                    invocation.stdout.flush()
                    pending = ""
                    continue
                }
                invocation.out("\n")
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
                    .replacing("%TIMING%", with: console.timing ? "on" : "off")
                    .replacing("%ZONE%", with: console.timeZone))
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
        case ".timing":
            switch argument {
            case "": invocation.out("timing: \(console.timing ? "on" : "off")\n")
            case "on": console.timing = true
            case "off": console.timing = false
            default:
                return fail(".timing takes on or off")
            }
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
        case ".quit", ".exit":
            quit = true
        default:
            return fail("unknown command '\(command)'; .help lists the commands")
        }
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
