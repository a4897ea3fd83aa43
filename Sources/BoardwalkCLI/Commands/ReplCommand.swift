import Boardwalk

/// `boardwalk repl`.
enum ReplCommand: Command {
    static let name = "repl"
    static let summary = "Interactive queries with line editing, history and completion"
    static let usage =
        "boardwalk repl [--db DIR | --generated N [--seed S] [--onboardings K]] [--format table|json|csv] [--tz ZONE]"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "table (default), json or csv"),
        timeZoneOption,
        generatedOption, seedOption, generatedOnboardingsOption,
    ]
    static let discussion = """
        On a terminal: line editing and history (libedit; history in $BOARDWALK_HISTORY, else
        ~/.boardwalk_history), tab completion of stages, fields and onboarding ids, and a line ending in '|'
        continues on the next. Ctrl-C cancels the running query (or the line being typed), Ctrl-D leaves.
        Dot-commands: .help .fields .onboardings .stats .format [table|json|csv] .mode [table|line|json|csv]
        .timing [on|off] (.timer) .tz [ZONE] .explain QUERY .output [FILE] .read FILE .quit. A query ending in
        \\G prints each row as lines of column = value; on a terminal, a result longer than the screen goes
        through $PAGER (less by default; PAGER= turns it off).

        Fed by a pipe, it runs each query it reads without prompts, and exits with status 2 if any failed
        (0 otherwise); errors go to stderr and the remaining queries still run.

        Examples:
          boardwalk repl
          printf 'events | count\\nsessions | funnel\\n' | boardwalk repl

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        let format =
            try arguments.choice("format", among: ResultTable.Format.names).flatMap(ResultTable.Format.init) ?? .table
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let opened = try openQuerySource(arguments, invocation)
        installInterruptHandler()
        let console = QueryConsole(source: opened.source, invocation: invocation, cancellation: interruptFlag)
        console.format = format
        console.timeZone = try arguments.timeZone()
        let repl = Repl(
            console: console, invocation: invocation, completionWords: opened.completionWords, stats: opened.stats)
        if invocation.stdinIsTerminal {
            let history =
                invocation.environment["BOARDWALK_HISTORY"]
                ?? invocation.environment["HOME"].map { $0 + "/.boardwalk_history" }
            return repl.runInteractive(historyPath: history)
        }
        return repl.runPiped(StandardInputLines())
    }
}
