import BoardwalkStore

/// What the tool prints for an error, where, and how it exits: a pure function of the error, so it is
/// tested without spawning a process.
package struct ErrorReport: Hashable, Sendable {
    /// The text to print, with its trailing newline.
    package var text: String
    /// Where to print it (errors always go to stderr).
    package var stream: OutputStream
    /// The process's exit status: 64 for usage errors, 1 otherwise.
    package var exitCode: Int32

    /// - Parameters:
    ///   - error: what went wrong.
    ///   - command: the command being run, if any (its usage line is shown for usage errors).
    package init(_ error: any Error, command: (any Command.Type)?) {
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
            text =
                "Error: \(lmdb)\n  The store's file is damaged: 'boardwalk check' lists the damage, "
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
