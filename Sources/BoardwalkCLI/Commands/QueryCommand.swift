import Boardwalk

/// `boardwalk query`.
enum QueryCommand: Command {
    static let name = "query"
    static let summary = "Run one query (or each query read from stdin with '-')"
    static let usage =
        "boardwalk query [--db DIR | --generated N [--seed S] [--onboardings K]] [--format table|json|csv] [--tz ZONE] [--timing] [--ignore-damaged] [--threads N] [--sql clickhouse [--table NAME]] 'QUERY' | -"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "table (default), json or csv"),
        timeZoneOption,
        OptionSpec(
            "timing", short: "t",
            help: "Print the query's own time (ms) and rows read after each query, and the store's open time, on stderr"
        ),
        OptionSpec(
            "ignore-damaged",
            help: "Read around damaged blocks of the store instead of stopping; a note on stderr says what was skipped"
        ),
        OptionSpec(
            "threads", value: "N",
            help: "Scan with at most N threads (default: every core); 1 reads on one thread"),
        OptionSpec("sql", value: "DIALECT", help: "Print the query as SQL instead of running it; DIALECT: clickhouse"),
        OptionSpec("table", value: "NAME", help: "With --sql: the table the SQL reads (default: boardwalk_events)"),
        generatedOption, seedOption, generatedOnboardingsOption,
    ]
    static let discussion = """
        The query language is described in docs/query-language.md. Results go to stdout; a query's error goes
        to stderr with a caret under the offending part. With '-', queries are read from stdin, one per line
        (a line ending in '|', a '#' comment after it aside, continues on the next; blank lines and lines
        starting with '#' are skipped, also inside a continued query),
        and each result is printed in turn; an error's location is its line of stdin. In table format each
        query is echoed before its result, with a blank line between results (as 'sqlite3 -echo' prints them);
        in json format each result is one line (NDJSON: line n answers query n, 'null' when it failed); csv
        results follow each other.

        Notes go to stderr too, before the result, and change neither the result nor the exit status: an event
        name close to a known one, and an onboarding id that has no events in the store (with the closest id
        that has, when one is close).

        A query stops at a damaged block of the store (a checksum that fails) with a message naming it. With
        --ignore-damaged it reads around damaged blocks instead, and a note on stderr says how many blocks and
        events it skipped and where (onboarding, screen, time range); damage to the store's B-tree pages or its
        strings still stops it.

        Counts by event fields ('events | count by name') split the store's key ranges among threads, one per
        core unless --threads says fewer, and add up what each counted: the answer is the same at any number.

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
        let format =
            try arguments.choice("format", among: ResultTable.Format.names).flatMap(ResultTable.Format.init) ?? .table
        guard arguments.positionals.count == 1, let text = arguments.positionals.first else {
            throw UsageError(arguments.positionals.isEmpty ? "missing the query" : "give one query (quote it), or '-'")
        }
        let timeZone = try arguments.timeZone()
        if try arguments.choice("sql", among: ["clickhouse"]) != nil {
            guard text != "-" else { throw UsageError("--sql translates one query given as an argument") }
            for option in ["format", "generated", "seed", "onboardings"] where arguments.value(option) != nil {
                throw UsageError("--\(option) does not apply to --sql, which runs nothing")
            }
            if arguments.flag("timing") { throw UsageError("--timing does not apply to --sql, which runs nothing") }
            do {
                let sql = try Query.parse(text, timeZone: timeZone).clickHouseSQL(
                    table: arguments.value("table") ?? ClickHouseTable.defaultName)
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
                _ = try Query.parse(text, timeZone: timeZone)
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
        console.ignoreDamaged = arguments.flag("ignore-damaged")
        console.threads = try arguments.integer("threads", in: 1...QueryConsole.maxThreads) ?? console.threads
        console.timeZone = timeZone
        console.openedIn = openedIn
        if text == "-" {
            let repl = Repl(console: console, invocation: invocation, completionWords: [], stats: opened.stats)
            // Several results in a row: tables each after their query and a blank line, as `sqlite3 -echo` prints
            // them; JSON one document per line (NDJSON), `null` for a query that failed.
            repl.echoQueries = true
            console.jsonLines = format == .json
            return repl.runPiped(StandardInputLines())
        }
        if console.run(text) { return ExitCode.success }
        // A query cancelled by Ctrl-C exits as an interrupted ingest does.
        return interruptFlag.isCancelled ? ExitCode.interrupted : ExitCode.failure
    }
}
