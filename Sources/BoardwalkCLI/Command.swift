/// One `boardwalk` subcommand: its help and its work.
package protocol Command {
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
