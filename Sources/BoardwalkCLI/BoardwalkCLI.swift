import BoardwalkQuery

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `boardwalk` tool: dispatch to a subcommand, print errors, return an exit status.
///
/// `main.swift` calls ``main()``; tests call ``run(_:_:)`` with a captured ``Invocation``.
package enum BoardwalkCLI {
    /// The tool's version, printed by `--version`.
    package static let version = "0.1.0"

    /// The tool's usage line.
    package static let usage = "boardwalk [--db DIR] <command> [options]"

    /// Every subcommand, in the order help lists them.
    package static var commands: [any Command.Type] {
        [
            IngestCommand.self, QueryCommand.self, ReplCommand.self, StatsCommand.self, ExportCommand.self,
            CheckCommand.self, LintCommand.self, BackupCommand.self, GenerateCommand.self, DemoCommand.self,
        ]
    }

    /// Runs the tool for the process and exits with its status.
    package static func main() -> Never {
        let invocation = Invocation.process()
        let status = run(Array(CommandLine.arguments.dropFirst()), invocation)
        invocation.stdout.flush()
        invocation.stderr.flush()
        exit(status)
    }

    /// Runs the tool for `arguments` (without the program name).
    /// - Returns: the exit status; 1 when writing to standard output failed (a full disk, a closed pipe with SIGPIPE
    ///   ignored), whatever the command made of it: its output is incomplete.
    package static func run(_ arguments: [String], _ invocation: Invocation) -> Int32 {
        let status = dispatch(arguments, invocation)
        invocation.stdout.flush()
        if invocation.stdout.writeError != nil, status == ExitCode.success || status == ExitCode.partial {
            return ExitCode.failure
        }
        return status
    }

    private static func dispatch(_ arguments: [String], _ invocation: Invocation) -> Int32 {
        var command: (any Command.Type)? = nil
        do {
            // Global options may precede the command: `--db DIR`, `--help`, `--version`.
            var rest = arguments[...]
            var globalDBs: [String] = []
            while let first = rest.first, first.hasPrefix("-"), first != "-" {
                if first == "--help" || first == "-h" {
                    invocation.out(toolHelp)
                    return ExitCode.success
                } else if first == "--version" {
                    invocation.out("boardwalk \(version)\n")
                    return ExitCode.success
                } else if first == "--db" {
                    rest = rest.dropFirst()
                    guard let value = rest.first else { throw UsageError("option '--db' needs a value (DIR)") }
                    globalDBs.append(value)
                } else if first.hasPrefix("--db=") {
                    globalDBs.append(String(first.dropFirst(5)))
                } else {
                    throw UsageError("unknown option '\(first)'")
                }
                rest = rest.dropFirst()
            }
            guard let name = rest.first else {
                if invocation.stdinIsTerminal && invocation.stdoutIsTerminal {
                    command = ReplCommand.self
                    return try execute(ReplCommand.self, globalDBs.flatMap { ["--db", $0] }, invocation)
                }
                throw UsageError("missing command")
            }
            if name == "help" {
                // `boardwalk help [COMMAND]`
                if let topic = rest.dropFirst().first {
                    guard let found = commands.first(where: { $0.name == topic }) else {
                        throw UsageError("unknown command '\(topic)'")
                    }
                    invocation.out(helpText(for: found))
                } else {
                    invocation.out(toolHelp)
                }
                return ExitCode.success
            }
            guard let found = commands.first(where: { $0.name == name }) else {
                throw UsageError("unknown command '\(name)'" + suggestion(for: name))
            }
            command = found
            var commandArguments = Array(rest.dropFirst())
            if !globalDBs.isEmpty {
                guard found.options.contains(where: { $0.long == "db" }) else {
                    throw UsageError("'\(found.name)' does not use a store (--db)")
                }
                commandArguments = globalDBs.flatMap { ["--db", $0] } + commandArguments
            }
            return try execute(found, commandArguments, invocation)
        } catch {
            let report = ErrorReport(error, command: command)
            (report.stream == .stdout ? invocation.stdout : invocation.stderr).write(report.text)
            return report.exitCode
        }
    }

    static func execute(_ command: any Command.Type, _ arguments: [String], _ invocation: Invocation) throws -> Int32 {
        let parsed = try parseArguments(arguments, options: command.options + [helpOption])
        // Two stores (`--db` before the command and among its options, say) is a mistake, not a choice of the last.
        if let stores = parsed.values["db"], stores.count > 1 {
            throw UsageError("--db given twice ('\(stores[0])', then '\(stores[1])'): give one store")
        }
        // `--db ''` (or `--db "$DIR"` with DIR unset) names nothing: taken as a path it gave "no store at ''", and an
        // empty `--rejects` was not caught before the run. No option of any command takes an empty value.
        for option in command.options where parsed.values[option.long]?.contains("") == true {
            throw UsageError("option '--\(option.long)' needs a value (\(option.valueName ?? "")), got an empty string")
        }
        if parsed.flag("help") {
            invocation.out(helpText(for: command))
            return ExitCode.success
        }
        return try command.run(parsed, invocation)
    }

    static func suggestion(for name: String) -> String {
        let close = commands.map { $0.name }.filter { editDistance($0, name) <= 2 }
        return close.isEmpty ? "" : " (did you mean '\(close[0])'?)"
    }

    static var toolHelp: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        var text = """
            boardwalk: an event-log engine for onboarding analytics events.

            Usage: \(usage)

            Commands:

            """
        for command in commands { text += "  \(command.name.padding(to: width))  \(command.summary)\n" }
        text += """

            Options:
              --db DIR    The store directory (default: $BOARDWALK_DB, else ./boardwalk.db)
              -h, --help  Show this help and exit
              --version   Show the version and exit

            Environment:
              BOARDWALK_DB       The default store directory
              BOARDWALK_HISTORY  The REPL's history file (default: ~/.boardwalk_history)
              NO_COLOR           When set (non-empty), never use colour

            Exit status: 0 success, 1 failure, 2 finished with rejected input, failed queries or a salvage that
            skipped damage, 64 usage error, 130 interrupted (Ctrl-C).
            Run 'boardwalk <command> --help' for a command's options. Plain 'boardwalk' on a terminal starts the REPL.

            """
        return text
    }
}
