#if canImport(Glibc)
import Glibc
#endif
import Boardwalk

/// The options that choose what queries read: the store (`--db`), or generated sessions in memory.
let generatedOption = OptionSpec(
    "generated", value: "N",
    help: "Query N freshly generated sessions in memory instead of a store (to try the language)")
let seedOption = OptionSpec("seed", value: "S", help: "The seed for --generated (default: 1)")
let generatedOnboardingsOption = OptionSpec(
    "onboardings", value: "K", help: "With --generated: how many onboardings sessions are drawn from (default: 6, as generate)")

/// Opens what queries read.
func openQuerySource(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> QuerySource {
    if let n = try arguments.integer("generated", in: 0...1_000_000) {
        if arguments.value("db") != nil { throw UsageError("--generated queries sessions made in memory; --db does not apply") }
        let seed = try arguments.unsigned("seed") ?? 1
        // The same sessions as `boardwalk generate --sessions N --seed S --onboardings K` writes.
        let onboardings = try arguments.integer("onboardings", in: 1...10_000) ?? 6
        let data = SyntheticData(sessions: n, seed: seed, onboardings: onboardings)
        return QuerySource(
            source: InMemoryEventSource(Array(data.events())), completionWords: data.onboardings.map { "\"\($0.id)\"" },
            stats: nil)
    }
    for option in ["seed", "onboardings"] where arguments.value(option) != nil {
        throw UsageError("--\(option) goes with --generated")
    }
    return try openStoreQuerySource(invocation.database(arguments), notes: invocation)
}

/// A source for queries, with what the REPL offers about it.
struct QuerySource {
    var source: any EventSource
    /// Quoted onboarding ids and other words for completion.
    var completionWords: [String]
    /// `.stats` output, when the source is a store.
    var stats: (() throws -> String)?
}

/// `boardwalk query`.
enum QueryCommand: Command {
    static let name = "query"
    static let summary = "Run one query (or each query read from stdin with '-')"
    static let usage = "boardwalk query [--db DIR | --generated N [--seed S] [--onboardings K]] [--format table|json|csv] [--timing] [--sql clickhouse [--table NAME]] 'QUERY' | -"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "table (default), json or csv"),
        OptionSpec("timing", short: "t", help: "Print the query's own time (ms) and rows read after each query, and the store's open time, on stderr"),
        OptionSpec("sql", value: "DIALECT", help: "Print the query as SQL instead of running it; DIALECT: clickhouse"),
        OptionSpec("table", value: "NAME", help: "With --sql: the table the SQL reads (default: boardwalk_events)"),
        generatedOption, seedOption, generatedOnboardingsOption,
    ]
    static let discussion = """
        The query language is described in docs/query-language.md. Results go to stdout; a query's error goes
        to stderr with a caret under the offending part. With '-', queries are read from stdin, one per line
        (a line ending in '|', a '#' comment after it aside, continues on the next; blank lines and lines
        starting with '#' are skipped, also inside a continued query),
        and each result is printed in turn; an error's location is its line of stdin.

        Notes go to stderr too, before the result, and change neither the result nor the exit status: an event
        name close to a known one, and an onboarding id that has no events in the store (with the closest id
        that has, when one is close).

        With --sql clickhouse, nothing is read: the query is printed as one ClickHouse SELECT over the table
        that 'boardwalk export --format clickhouse' fills (docs/clickhouse.md), giving the same results.

        Exit status: 0 when every query succeeded; 1 when the one query failed (or cannot be translated) or the
        store cannot be opened; 2 when some of the queries read from stdin failed; 130 when Ctrl-C cancelled it.

        Examples:
          boardwalk query 'sessions | funnel'
          boardwalk query --sql clickhouse 'sessions | stats rate(completed) by variation' | clickhouse-client
          boardwalk query --format csv 'events | count by kind' > kinds.csv
          boardwalk query - < queries.txt

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        let format = try arguments.choice("format", among: ResultTable.Format.names).flatMap(ResultTable.Format.init) ?? .table
        guard arguments.positionals.count == 1, let text = arguments.positionals.first else {
            throw UsageError(arguments.positionals.isEmpty ? "missing the query" : "give one query (quote it), or '-'")
        }
        if try arguments.choice("sql", among: ["clickhouse"]) != nil {
            guard text != "-" else { throw UsageError("--sql translates one query given as an argument") }
            for option in ["format", "generated", "seed", "onboardings"] where arguments.value(option) != nil {
                throw UsageError("--\(option) does not apply to --sql, which runs nothing")
            }
            if arguments.flag("timing") { throw UsageError("--timing does not apply to --sql, which runs nothing") }
            do {
                let sql = try Query.parse(text).clickHouseSQL(table: arguments.value("table") ?? ClickHouseTable.defaultName)
                invocation.out(sql + "\n")
                return ExitCode.success
            } catch {
                invocation.err(error.description + "\n")
                return ExitCode.failure
            }
        }
        if arguments.value("table") != nil { throw UsageError("--table goes with --sql") }
        if text != "-" {
            // A query that cannot run says so before the store is opened: its mistake, not a missing store's.
            do {
                _ = try Query.parse(text)
            } catch {
                var message = error.description
                if !message.hasSuffix("\n") { message += "\n" }
                invocation.err(message)
                return ExitCode.failure
            }
        }
        let openStart = monotonicMicroseconds()
        let opened = try openQuerySource(arguments, invocation)
        let openedIn = monotonicMicroseconds() - openStart
        installInterruptHandler()
        let console = QueryConsole(source: opened.source, invocation: invocation, cancellation: interruptFlag)
        console.format = format
        console.timing = arguments.flag("timing")
        console.openedIn = openedIn
        if text == "-" {
            let repl = Repl(console: console, invocation: invocation, completionWords: [], stats: opened.stats)
            return repl.runPiped(StandardInputLines())
        }
        if console.run(text) { return ExitCode.success }
        // A query cancelled by Ctrl-C exits as an interrupted ingest does.
        return interruptFlag.isCancelled ? ExitCode.interrupted : ExitCode.failure
    }
}

/// `boardwalk repl`.
enum ReplCommand: Command {
    static let name = "repl"
    static let summary = "Interactive queries with line editing, history and completion"
    static let usage = "boardwalk repl [--db DIR | --generated N [--seed S] [--onboardings K]] [--format table|json|csv]"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "table (default), json or csv"),
        generatedOption, seedOption, generatedOnboardingsOption,
    ]
    static let discussion = """
        On a terminal: line editing and history (libedit; history in $BOARDWALK_HISTORY, else
        ~/.boardwalk_history), tab completion of stages, fields and onboarding ids, and a line ending in '|'
        continues on the next. Ctrl-C cancels the running query (or the line being typed), Ctrl-D leaves.
        Dot-commands: .help .fields .onboardings .stats .format [table|json|csv] .timing [on|off] .explain QUERY .quit

        Fed by a pipe, it runs each query it reads without prompts, and exits with status 2 if any failed
        (0 otherwise); errors go to stderr and the remaining queries still run.

        Examples:
          boardwalk repl
          printf 'events | count\\nsessions | funnel\\n' | boardwalk repl

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        let format = try arguments.choice("format", among: ResultTable.Format.names).flatMap(ResultTable.Format.init) ?? .table
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let opened = try openQuerySource(arguments, invocation)
        installInterruptHandler()
        let console = QueryConsole(source: opened.source, invocation: invocation, cancellation: interruptFlag)
        console.format = format
        let repl = Repl(console: console, invocation: invocation, completionWords: opened.completionWords, stats: opened.stats)
        if invocation.stdinIsTerminal {
            let history = invocation.environment["BOARDWALK_HISTORY"]
                ?? invocation.environment["HOME"].map { $0 + "/.boardwalk_history" }
            return repl.runInteractive(historyPath: history)
        }
        return repl.runPiped(StandardInputLines())
    }
}

/// The lines of standard input, read as they arrive (without their newlines, `\n` or `\r\n`), a UTF-8 byte-order mark
/// at the very start left out: Windows editors save `queries.txt` with one, and it is no part of the first query.
struct StandardInputLines: Sequence, IteratorProtocol {
    private var atStart = true

    mutating func next() -> String? {
        guard var line = Swift.readLine(strippingNewline: true) else { return nil }
        if atStart {
            atStart = false
            if line.unicodeScalars.first == "\u{FEFF}" { line.unicodeScalars.removeFirst() }
        }
        return line
    }
}
