import BoardwalkStore

/// One `boardwalk` subcommand: its help and its work.
public protocol Command {
    /// The subcommand's name (`generate`).
    static var name: String { get }
    /// One line for the tool's command list.
    static var summary: String { get }
    /// The usage line without `Usage: ` (`boardwalk generate --sessions N [--seed S]`).
    static var usage: String { get }
    /// The options besides `-h/--help`.
    static var options: [OptionSpec] { get }
    /// Help text after the options: what it does in detail, examples, exit statuses.
    static var discussion: String { get }
    /// Does the work.
    /// - Returns: the exit status (0 success; see each command for others).
    /// - Throws: ``UsageError`` for a wrong invocation, ``RuntimeError`` (or any error) for a failure.
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32
}

/// The `--db DIR` option every store command takes.
let databaseOption = OptionSpec(
    "db", value: "DIR", help: "The store directory (default: $BOARDWALK_DB, else ./boardwalk.db)")

/// `-h, --help`, which every command accepts.
let helpOption = OptionSpec("help", short: "h", help: "Show this help and exit")

/// A failure while doing the work (exit status 1).
public struct RuntimeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed, without the `Error: ` prefix.
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Exit statuses.
public enum ExitCode {
    /// Everything worked.
    public static let success: Int32 = 0
    /// A runtime failure.
    public static let failure: Int32 = 1
    /// The command finished but rejected some input (ingest) or some queries failed (piped REPL/query).
    public static let partial: Int32 = 2
    /// `EX_USAGE` from sysexits.h: the command line was wrong.
    public static let usage: Int32 = 64
    /// Stopped by Ctrl-C (SIGINT), as a shell reports a process killed by it: 128 + 2.
    public static let interrupted: Int32 = 130
}

/// What the tool prints for an error, where, and how it exits: a pure function of the error, so it is
/// tested without spawning a process.
public struct ErrorReport: Hashable, Sendable {
    /// The text to print, with its trailing newline.
    public var text: String
    /// Where to print it (errors always go to stderr).
    public var stream: OutputStream
    /// The process's exit status: 64 for usage errors, 1 otherwise.
    public var exitCode: Int32

    /// - Parameters:
    ///   - error: what went wrong.
    ///   - command: the command being run, if any (its usage line is shown for usage errors).
    public init(_ error: any Error, command: (any Command.Type)?) {
        switch error {
        case let usage as UsageError:
            let usageLine = command?.usage ?? BoardwalkCLI.usage
            let helpHint = command.map { "boardwalk \($0.name) --help" } ?? "boardwalk --help"
            text = "Error: \(usage.message)\nUsage: \(usageLine)\n  See '\(helpHint)' for more information.\n"
            stream = .stderr
            exitCode = ExitCode.usage
        case let runtime as RuntimeError:
            text = "Error: \(runtime.message)\n"
            stream = .stderr
            exitCode = ExitCode.failure
        case let lmdb as StoreError where lmdb.meansDamage:
            text = "Error: \(lmdb)\n  The store's file is damaged: 'boardwalk check' lists the damage, "
                + "'boardwalk export --salvage' reads what is left.\n"
            stream = .stderr
            exitCode = ExitCode.failure
        default:
            text = "Error: \(error)\n"
            stream = .stderr
            exitCode = ExitCode.failure
        }
    }
}

/// Renders a command's `--help`.
func helpText(for command: any Command.Type) -> String {
    var text = "\(command.summary)\n\nUsage: \(command.usage)\n\nOptions:\n"
    text += optionTable(command.options + [helpOption])
    if !command.discussion.isEmpty { text += "\n" + command.discussion }
    if !text.hasSuffix("\n") { text += "\n" }
    return text
}

func optionTable(_ options: [OptionSpec]) -> String {
    let width = options.map(\.synopsis.count).max() ?? 0
    return options.map { "  " + $0.synopsis.padding(to: width) + "  " + $0.help + "\n" }.joined()
}

extension String {
    /// Pads with spaces on the right to `width` characters (never truncates).
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
    /// Pads with spaces on the left to `width` characters (never truncates).
    func leftPadding(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
